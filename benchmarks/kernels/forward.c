/*===- forward.c - Kernels that hand their inputs back, at no cost --------===*\
 *
 * `forward_<N>_r<R>` follows Catalyst's pyface ABI, `void entry(void *rv,
 * void *av)`: av points at N pointers to rank-R memref descriptors, rv at N
 * rank-R descriptors laid out back to back, and output i is input i's
 * descriptor. Outputs alias inputs, so the executor reads, writes and
 * allocates nothing: a launch with N inputs is N memrefs over and N back,
 * all transfer, as the identity kernel's is (forward_1_r1 is identity).
 *
 * A kernel concatenating its inputs into one fresh output was the other
 * choice; it would add a full-size allocation and copy on the executor to
 * every launch, page faults included, and time the executor's memory rather
 * than the link.
 *
 * The element type does not matter: a descriptor's layout depends on its
 * rank only.
 *
\*===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <string.h>

static void forward(void *rv, void *av, int n, int rank) {
  size_t bytes = (3 + 2 * (size_t)rank) * sizeof(int64_t);
  void *const *inputs = (void *const *)av;
  for (int i = 0; i < n; ++i)
    memcpy((char *)rv + (size_t)i * bytes, inputs[i], bytes);
}

/* One entry per input count and rank the benchmark launches. */
#define FORWARD(n, rank)                                                                           \
  void forward_##n##_r##rank(void *rv, void *av);                                                  \
  void forward_##n##_r##rank(void *rv, void *av) {                                                 \
    forward(rv, av, n, rank);                                                                      \
  }

FORWARD(1, 1)
FORWARD(4, 1)
FORWARD(16, 1)
FORWARD(64, 1)
FORWARD(1, 3)
