// Kernels written in MLIR and lowered the way Catalyst lowers its programs
// (memref-based linalg to loops, then to the LLVM dialect), so that the
// executor links and runs what that lowering really produces rather than
// what a hand-written C kernel imitates: functions with a C interface,
// buffers allocated with an alignment (aligned != allocated), views into
// larger allocations, results that are an argument, rank-0 results and
// constant globals (allocated == 0xdeadbeef).
//
// Inputs take any strides and offset, so a test can pass strided views.
// Each kernel has a pyface entry at the end of the file.

#any1 = strided<[?], offset: ?>
#any2 = strided<[?, ?], offset: ?>

memref.global "private" constant @table : memref<2x3xi32> =
    dense<[[11, -22, 33], [-44, 55, 2147483647]]>

// a(m x k) * b(k x n), in a buffer allocated 64-byte aligned.
func.func @mlir_matmul(%a: memref<?x?xf64, #any2>, %b: memref<?x?xf64, #any2>)
    -> memref<?x?xf64> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = memref.dim %a, %c0 : memref<?x?xf64, #any2>
  %n = memref.dim %b, %c1 : memref<?x?xf64, #any2>
  %c = memref.alloc(%m, %n) {alignment = 64 : i64} : memref<?x?xf64>
  linalg.fill ins(%zero : f64) outs(%c : memref<?x?xf64>)
  linalg.matmul ins(%a, %b : memref<?x?xf64, #any2>, memref<?x?xf64, #any2>)
                outs(%c : memref<?x?xf64>)
  return %c : memref<?x?xf64>
}

// a(m x n) + transpose(b(n x m)), through a temporary it frees.
func.func @mlir_transpose_add(%a: memref<?x?xf32, #any2>, %b: memref<?x?xf32, #any2>)
    -> memref<?x?xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32, #any2>
  %n = memref.dim %a, %c1 : memref<?x?xf32, #any2>
  %bt = memref.alloc(%m, %n) : memref<?x?xf32>
  linalg.transpose ins(%b : memref<?x?xf32, #any2>) outs(%bt : memref<?x?xf32>)
                   permutation = [1, 0]
  %sum = memref.alloc(%m, %n) {alignment = 64 : i64} : memref<?x?xf32>
  linalg.add ins(%a, %bt : memref<?x?xf32, #any2>, memref<?x?xf32>)
             outs(%sum : memref<?x?xf32>)
  memref.dealloc %bt : memref<?x?xf32>
  return %sum : memref<?x?xf32>
}

// 3 * a(m x n) into a fresh buffer, returned as the view of its rows 1..m-1
// and odd columns: offset n + 1, column stride 2, into an allocation that
// only this view keeps.
func.func @mlir_window(%a: memref<?x?xf32, #any2>)
    -> memref<?x?xf32, strided<[?, 2], offset: ?>> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %three = arith.constant 3.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32, #any2>
  %n = memref.dim %a, %c1 : memref<?x?xf32, #any2>
  %b = memref.alloc(%m, %n) {alignment = 64 : i64} : memref<?x?xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x?xf32, #any2>) outs(%b : memref<?x?xf32>) {
    ^bb0(%x: f32, %unused: f32):
      %y = arith.mulf %x, %three : f32
      linalg.yield %y : f32
  }
  %rows = arith.subi %m, %c1 : index
  %cols = arith.divui %n, %c2 : index
  %view = memref.subview %b[1, 1] [%rows, %cols] [1, 2]
      : memref<?x?xf32> to memref<?x?xf32, strided<[?, 2], offset: ?>>
  return %view : memref<?x?xf32, strided<[?, 2], offset: ?>>
}

// a itself, and the view of its odd elements: both results alias the input.
func.func @mlir_identity(%a: memref<?xi32, #any1>)
    -> (memref<?xi32, #any1>, memref<?xi32, #any1>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %a, %c0 : memref<?xi32, #any1>
  %half = arith.divui %n, %c2 : index
  %odd = memref.subview %a[1] [%half] [2] : memref<?xi32, #any1> to memref<?xi32, #any1>
  return %a, %odd : memref<?xi32, #any1>, memref<?xi32, #any1>
}

// The sum of a(m x n) as a rank-0 result, its column sums, and the
// constant table.
func.func @mlir_reduce(%a: memref<?x?xf64, #any2>)
    -> (memref<f64>, memref<?xf64>, memref<2x3xi32>) attributes {llvm.emit_c_interface} {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %a, %c1 : memref<?x?xf64, #any2>
  %total = memref.alloc() {alignment = 64 : i64} : memref<f64>
  linalg.fill ins(%zero : f64) outs(%total : memref<f64>)
  linalg.reduce ins(%a : memref<?x?xf64, #any2>) outs(%total : memref<f64>) dimensions = [0, 1]
    (%x: f64, %acc: f64) {
      %s = arith.addf %x, %acc : f64
      linalg.yield %s : f64
    }
  %cols = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf64>
  linalg.fill ins(%zero : f64) outs(%cols : memref<?xf64>)
  linalg.reduce ins(%a : memref<?x?xf64, #any2>) outs(%cols : memref<?xf64>) dimensions = [0]
    (%x: f64, %acc: f64) {
      %s = arith.addf %x, %acc : f64
      linalg.yield %s : f64
    }
  %table = memref.get_global @table : memref<2x3xi32>
  return %total, %cols, %table : memref<f64>, memref<?xf64>, memref<2x3xi32>
}

// The pyface entries: void _catalyst_pyface_NAME(void *rv, void *av), av an
// array of pointers to input descriptors, rv the output descriptors end to
// end. Each passes rv and the input descriptors to NAME's C interface,
// which takes a pointer to its result first: one descriptor, or for several
// results a struct of descriptors, whose fields (pointers and i64) leave no
// padding, so it is the descriptors end to end.
//
// The C interface's symbol only appears when --convert-func-to-llvm runs,
// and declaring it here first would make that a redefinition. So the entries
// declare it with LLVM's "\01" prefix, which asks for the rest of the name
// to be emitted verbatim (as C's asm("name") labels do): another symbol
// here, the same one in the object, where the call binds to the definition.

llvm.func @"\01_mlir_ciface_mlir_matmul"(!llvm.ptr, !llvm.ptr, !llvm.ptr)
llvm.func @_catalyst_pyface_mlir_matmul(%rv: !llvm.ptr, %av: !llvm.ptr) {
  %a = llvm.load %av : !llvm.ptr -> !llvm.ptr
  %av1 = llvm.getelementptr %av[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %b = llvm.load %av1 : !llvm.ptr -> !llvm.ptr
  llvm.call @"\01_mlir_ciface_mlir_matmul"(%rv, %a, %b) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

llvm.func @"\01_mlir_ciface_mlir_transpose_add"(!llvm.ptr, !llvm.ptr, !llvm.ptr)
llvm.func @_catalyst_pyface_mlir_transpose_add(%rv: !llvm.ptr, %av: !llvm.ptr) {
  %a = llvm.load %av : !llvm.ptr -> !llvm.ptr
  %av1 = llvm.getelementptr %av[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %b = llvm.load %av1 : !llvm.ptr -> !llvm.ptr
  llvm.call @"\01_mlir_ciface_mlir_transpose_add"(%rv, %a, %b)
      : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

llvm.func @"\01_mlir_ciface_mlir_window"(!llvm.ptr, !llvm.ptr)
llvm.func @_catalyst_pyface_mlir_window(%rv: !llvm.ptr, %av: !llvm.ptr) {
  %a = llvm.load %av : !llvm.ptr -> !llvm.ptr
  llvm.call @"\01_mlir_ciface_mlir_window"(%rv, %a) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

llvm.func @"\01_mlir_ciface_mlir_identity"(!llvm.ptr, !llvm.ptr)
llvm.func @_catalyst_pyface_mlir_identity(%rv: !llvm.ptr, %av: !llvm.ptr) {
  %a = llvm.load %av : !llvm.ptr -> !llvm.ptr
  llvm.call @"\01_mlir_ciface_mlir_identity"(%rv, %a) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

llvm.func @"\01_mlir_ciface_mlir_reduce"(!llvm.ptr, !llvm.ptr)
llvm.func @_catalyst_pyface_mlir_reduce(%rv: !llvm.ptr, %av: !llvm.ptr) {
  %a = llvm.load %av : !llvm.ptr -> !llvm.ptr
  llvm.call @"\01_mlir_ciface_mlir_reduce"(%rv, %a) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}
