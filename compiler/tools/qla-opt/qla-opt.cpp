// qla-opt: runs any qla or upstream pass on a .mlir file (for FileCheck tests and debugging).
#include "qla/Pipeline/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  qla::registerPassesAndPipelines();
  mlir::DialectRegistry registry;
  qla::registerQlaDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "qla optimizer driver\n", registry));
}
