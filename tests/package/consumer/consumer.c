/* consumer.c - adds two matrices in an executor through an installed
 * libcatalyst_remote, and checks the sum against its own.
 *
 *   consumer ADDRESS ADD_OBJECT
 *
 * Exits 0 when every element matches, 1 (saying what failed) otherwise. */

#include <catalyst/remote/RemoteCAPI.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} matrix;

static void fail(const char *message) {
  fprintf(stderr, "consumer: %s\n", message);
  exit(1);
}

int main(int argc, char **argv) {
  if (argc != 3)
    fail("usage: consumer ADDRESS ADD_OBJECT");
  __catalyst__remote__set_failure_handler(fail);
  int64_t s = __catalyst__remote__open(argv[1]);
  __catalyst__remote__send_binary(s, argv[2], 0);

  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60};
  matrix in_a = {a, a, 0, {2, 3}, {3, 1}};
  matrix in_b = {b, b, 0, {2, 3}, {1, 2}}; /* b read in Fortran order */
  matrix out = {0};
  void *inputs[2] = {&in_a, &in_b}, *outputs[1] = {&out};
  size_t ranks[2] = {2, 2}, elem[2] = {8, 8};
  const char *slash = strrchr(argv[2], '/'), *object = slash ? slash + 1 : argv[2];
  __catalyst__remote__launch(s, "_catalyst_pyface_add", object, 2, inputs, ranks, elem, 1, outputs,
                             ranks, elem);
  if (out.sizes[0] != 2 || out.sizes[1] != 3)
    fail("the sum has the wrong shape");
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double want = a[i * 3 + j] + b[i + j * 2];
      double got = out.aligned[out.offset + i * out.strides[0] + j * out.strides[1]];
      if (got != want) {
        fprintf(stderr, "consumer: element (%ld, %ld) is %g, not %g\n", (long)i, (long)j, got,
                want);
        return 1;
      }
    }
  __catalyst__remote__close(s);
  printf("consumer: the executor's sum matches\n");
  return 0;
}
