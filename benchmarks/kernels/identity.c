/*===- identity.c - A kernel that costs nothing ---------------------------===*\
 *
 * `identity` follows Catalyst's pyface ABI, `void entry(void *rv, void *av)`:
 * av[0] points at a rank-1 memref descriptor and rv receives that same
 * descriptor. The output aliases the input, so no element is read, written
 * or allocated on the executor and a launch measures only the transfer: the
 * input going over, the output coming back into a fresh host buffer.
 *
 * The element type does not matter: a rank-1 descriptor has the same layout
 * for every element type.
 *
\*===----------------------------------------------------------------------===*/

#include "memref_r1.h"

void identity(void *rv, void *av) {
  *(struct MemrefR1 *)rv = *((struct MemrefR1 *const *)av)[0];
}
