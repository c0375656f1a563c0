/*===- wrapper_buffer.h - ORC's C wrapper-function result ------*- C -*-===*\
 *
 * The C layout of llvm::orc::shared::CWrapperFunctionBuffer (LLVM 22,
 * WrapperFunctionUtils.h), which the executor's wrapper functions return:
 * results of up to 8 bytes live inline in Value; larger ones in a malloc'ed
 * ValuePtr that the caller frees; Size 0 with a non-null ValuePtr is an
 * out-of-band error whose malloc'ed message is ValuePtr.
 *
\*===----------------------------------------------------------------------===*/

#ifndef CATALYST_REMOTE_TESTS_WRAPPER_BUFFER_H
#define CATALYST_REMOTE_TESTS_WRAPPER_BUFFER_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef union {
  char *ValuePtr;
  char Value[sizeof(char *)];
} CWrapperFunctionBufferDataUnion;

typedef struct {
  CWrapperFunctionBufferDataUnion Data;
  size_t Size;
} CWrapperFunctionBuffer;

/* A result buffer of Size bytes; returns where to write them. */
static inline char *wrapper_result(CWrapperFunctionBuffer *R, size_t size) {
  R->Size = size;
  if (size > sizeof(R->Data.Value)) {
    R->Data.ValuePtr = (char *)malloc(size);
    return R->Data.ValuePtr;
  }
  R->Data.ValuePtr = NULL;
  return R->Data.Value;
}

static inline CWrapperFunctionBuffer wrapper_copy(const void *src, size_t size) {
  CWrapperFunctionBuffer R;
  memcpy(wrapper_result(&R, size), src, size);
  return R;
}

static inline CWrapperFunctionBuffer wrapper_error(const char *message) {
  CWrapperFunctionBuffer R;
  R.Size = 0;
  R.Data.ValuePtr = strdup(message);
  return R;
}

#endif
