/*===- rt_capi_standin.c - What Catalyst's host runtime needs of rt_capi --===*\
 *
 * Catalyst's host runtime allocates each output buffer with
 * __catalyst__rt__alloc_managed, from its librt_capi, which also registers
 * the buffer with the quantum runtime's memory manager. Outside Catalyst
 * there is no such manager: malloc memory serves, and callers free() it.
 *
\*===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdlib.h>

__attribute__((visibility("default"))) void *__catalyst__rt__alloc_managed(size_t size) {
  return malloc(size);
}
