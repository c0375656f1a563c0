/*===- missing_symbol.c - An object that cannot link ---------------------===*\
 *
 * Calls a function that exists nowhere, so linking it into the executor must
 * fail and say which symbol is missing.
 *
\*===----------------------------------------------------------------------===*/

#include "kernel_abi.h"

extern int catalyst_test_no_such_function(int);

void ENTRY(missing)(void *rv, void *av) {
  int64_t *out = (int64_t *)rv;
  *out = catalyst_test_no_such_function(3);
}
