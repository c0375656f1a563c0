/*===- sweep.c - A sweep's kernel that costs nothing ----------------------===*\
 *
 * `sweep` follows Catalyst's pyface ABI, `void entry(void *rv, void *av)`:
 * av[0] points at the sweep's constant, av[1] at its parameter, both rank-1
 * memrefs of any element type, and rv receives the parameter's descriptor.
 * Nothing of the constant is read, so a launch measures what reaching the
 * constant costs: sending it again, or naming it where the executor keeps
 * it.
 *
\*===----------------------------------------------------------------------===*/

#include "memref_r1.h"

void sweep(void *rv, void *av) {
  *(struct MemrefR1 *)rv = *((struct MemrefR1 *const *)av)[1];
}
