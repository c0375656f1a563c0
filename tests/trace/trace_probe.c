/*===- trace_probe.c - A program that traces through the C ABI -----------===*\
 *
 * trace_probe ADDRESS OBJECT TRACE MODE
 *
 * Traces to TRACE (CATALYST_REMOTE_TRACE, as a Catalyst program would set
 * it), links OBJECT and launches its concat_1 entry on 16 bytes, then, by
 * MODE, ends the way a program may end without closing its session:
 *   exit   returns from main: the session is closed by the library's
 *          static destructors
 *   _exit  _exit(0) right after the launch: nothing more runs
 *   fail   launches an entry that does not exist first (the failure handler
 *          returns), then returns from main
 * Exits 0 when everything before the end went as MODE says, else 1.
 *
\*===----------------------------------------------------------------------===*/

#include "catalyst/remote/RemoteCAPI.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct memref1 {
  void *allocated, *aligned;
  int64_t offset, size, stride;
};

static int Failures;

static void onFailure(const char *Message) {
  fprintf(stderr, "trace_probe: %s\n", Message);
  ++Failures;
}

static void launchConcat(int64_t Session, const char *Entry) {
  static char Bytes[16] = "fifteen bytes..";
  struct memref1 In = {Bytes, Bytes, 0, 16, 1}, Out = {0};
  void *Ins[] = {&In}, *Outs[] = {&Out};
  size_t Rank[] = {1}, Elem[] = {1};
  __catalyst__remote__launch(Session, Entry, "concat.o", 1, Ins, Rank, Elem, 1, Outs, Rank, Elem);
  free(Out.allocated);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: trace_probe ADDRESS OBJECT TRACE exit|_exit|fail\n");
    return 2;
  }
  const char *Mode = argv[4];
  setenv("CATALYST_REMOTE_TRACE", argv[3], 1);
  __catalyst__remote__set_failure_handler(onFailure);
  int64_t Session = __catalyst__remote__open(argv[1]);
  if (Session <= 0 || __catalyst__remote__send_binary(Session, argv[2], 0) != 0)
    return 1;
  if (strcmp(Mode, "fail") == 0) {
    launchConcat(Session, "_catalyst_pyface_no_such_entry");
    if (Failures != 1)
      return 1;
    Failures = 0;
  }
  launchConcat(Session, "_catalyst_pyface_concat_1");
  if (Failures)
    return 1;
  if (strcmp(Mode, "_exit") == 0)
    _exit(0);
  return 0;
}
