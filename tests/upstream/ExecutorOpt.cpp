//===- ExecutorOpt.cpp - catalyst-executor-opt ----------------------------===//
//
// An mlir-opt that knows Catalyst's `executor` dialect and its
// --convert-executor-to-llvm pass (both compiled from the extract of
// Catalyst's source), and just the upstream passes that take what that pass
// leaves (func, memref, arith, unrealized casts) the rest of the way to the
// LLVM dialect. mlir-translate and llc do the rest.
//
//===----------------------------------------------------------------------===//

#include "Executor/IR/ExecutorDialect.h"
#include "Executor/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace {

void registerLoweringPasses() {
  catalyst::executor::registerConvertExecutorToLLVMPass();
  mlir::registerFinalizeMemRefToLLVMConversionPass();
  mlir::registerArithToLLVMConversionPass();
  mlir::registerConvertFuncToLLVMPass();
  mlir::registerReconcileUnrealizedCastsPass();
}

} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry Registry;
  Registry.insert<catalyst::executor::ExecutorDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::LLVM::LLVMDialect, mlir::memref::MemRefDialect>();
  registerLoweringPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Catalyst's executor dialect, lowered\n", Registry));
}
