// A compiled program as Catalyst's lowering leaves it: code that calls the
// runtime's __catalyst__executor__* functions and has unwind tables, so that
// an exception the runtime throws reaches the program's caller, as
// Catalyst's Python wrapper expects (tests/capi/ExceptionTest.cpp).
module {
  llvm.func @__catalyst__executor__open(!llvm.ptr) -> i64
  llvm.func @__catalyst__executor__send_binary(i64, !llvm.ptr, i32) -> i64
  llvm.func @__catalyst__executor__launch(i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr,
                                          !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr)
  llvm.func @__catalyst__executor__close(i64) -> i64

  // Opens addr, sends the object at path object, launches entry on the
  // memrefs given as launch() takes them, and closes the session.
  llvm.func @catalyst_test_program(%addr: !llvm.ptr, %object: !llvm.ptr, %entry: !llvm.ptr,
                                   %num_inputs: i64, %inputs: !llvm.ptr, %input_ranks: !llvm.ptr,
                                   %input_elem_sizes: !llvm.ptr, %num_outputs: i64,
                                   %outputs: !llvm.ptr, %output_ranks: !llvm.ptr,
                                   %output_elem_sizes: !llvm.ptr) {
    %object_format = llvm.mlir.constant(0 : i32) : i32
    %session = llvm.call @__catalyst__executor__open(%addr) : (!llvm.ptr) -> i64
    %sent = llvm.call @__catalyst__executor__send_binary(%session, %object, %object_format)
        : (i64, !llvm.ptr, i32) -> i64
    llvm.call @__catalyst__executor__launch(%session, %entry, %object, %num_inputs, %inputs,
                                            %input_ranks, %input_elem_sizes, %num_outputs,
                                            %outputs, %output_ranks, %output_elem_sizes)
        : (i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr,
           !llvm.ptr, !llvm.ptr) -> ()
    %closed = llvm.call @__catalyst__executor__close(%session) : (i64) -> i64
    llvm.return
  }
}
