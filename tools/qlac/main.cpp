// qlac: ahead-of-time compilation and inspection of QLA kernels.
#include "Commands.h"

#include "qla/runtime/Error.h"

#include <cstdio>
#include <cstring>

static const char *kUsage = R"(usage: qlac <command> [options]

commands:
  compile <kernel> --set K=V,... -o DIR   compile to PTX, cubin and manifest.json in DIR
  dump <kernel> --set K=V,... [--after=PASS]
                                          print the tile IR, or the IR after a pass
  check <kernel> --set K=V,...            run the tile program on the CPU interpreter against a
                                          float64 reference on random inputs (no GPU needed)
  passes                                  list the pipeline's passes, in order
  cache ls|verify|clear [--dir ROOT]      the kernel cache on disk: list, check checksums, empty it
  tune gemm --shapes MxNxK,...            compile candidate configs in parallel, check and time them on
  tune gdn --shapes HxHVxBxT,...          the GPU, keep the results per GPU in the tuning database
  load gdn --set K=V,...                  build the GDN forward set through the JIT and disk cache, load
                                          its modules on the GPU, print the time of each part

kernels: gemm, gdn_offsets, gdn_cumsum, gdn_chunk_inverse, gdn_chunk_forward, gdn_split_correct,
         gdn_split_offsets, gdn_split_windows (compile, dump);
         check: gemm, gdn (the three GDN forward kernels on the CPU interpreter)
Run 'qlac <command> --help' for a command's options.
)";

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  qlac::Args args(argv + 2, argv + argc);
  std::string cmd = argv[1];
  try {
    if (cmd == "compile")
      return qlac::compileCommand(args);
    if (cmd == "dump")
      return qlac::dumpCommand(args);
    if (cmd == "check")
      return qlac::checkCommand(args);
    if (cmd == "passes")
      return qlac::passesCommand(args);
    if (cmd == "cache")
      return qlac::cacheCommand(args);
    if (cmd == "tune")
      return qlac::tuneCommand(args);
    if (cmd == "load")
      return qlac::loadCommand(args);
  } catch (const qla::Error &e) {
    std::fprintf(stderr, "qlac %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "qlac: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
