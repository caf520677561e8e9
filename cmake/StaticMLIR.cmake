# Finds Debian's LLVM/MLIR 22 and links them fully static, so binaries need only libc/libm and run on
# the GPU machine (see ../shared/examples/static-mlir-link). The runtime does not include this file.
find_package(MLIR REQUIRED CONFIG PATHS /usr/lib/llvm-22/lib/cmake/mlir NO_DEFAULT_PATH)
message(STATUS "MLIR ${MLIR_PACKAGE_VERSION} from ${MLIR_DIR}")
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
set(LLVM_LINK_LLVM_DYLIB OFF)
include(TableGen)
include(AddLLVM)
include(AddMLIR)

set(QLA_LLVM_COMPONENTS NVPTX Passes Linker IRReader CACHE STRING "LLVM components replacing libLLVM.so")
llvm_map_components_to_libnames(qla_llvm_static_libs ${QLA_LLVM_COMPONENTS})
add_library(LLVMStatic INTERFACE)
target_link_libraries(LLVMStatic INTERFACE ${qla_llvm_static_libs})
get_directory_property(_qla_imported IMPORTED_TARGETS)
foreach(t IN LISTS _qla_imported)
  get_target_property(_ll ${t} INTERFACE_LINK_LIBRARIES)
  if(_ll)
    list(TRANSFORM _ll REPLACE "^LLVM$" "LLVMStatic")
    list(TRANSFORM _ll REPLACE "^\\$<LINK_ONLY:LLVM>$" "$<LINK_ONLY:LLVMStatic>")
    set_property(TARGET ${t} PROPERTY INTERFACE_LINK_LIBRARIES "${_ll}")
  endif()
endforeach()
set_property(TARGET LLVMSupport PROPERTY INTERFACE_LINK_LIBRARIES
  rt dl m /usr/lib/x86_64-linux-gnu/libz.a /usr/lib/x86_64-linux-gnu/libzstd.a LLVMDemangle)

# Flags for targets that include MLIR/LLVM headers.
add_library(qla_mlir_flags INTERFACE)
target_include_directories(qla_mlir_flags SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_compile_definitions(qla_mlir_flags INTERFACE ${LLVM_DEFINITIONS})
target_compile_options(qla_mlir_flags INTERFACE -fno-rtti -Wno-deprecated-declarations)

set(QLA_STATIC_LINK_OPTIONS -static-libstdc++ -static-libgcc -Wl,--gc-sections)
