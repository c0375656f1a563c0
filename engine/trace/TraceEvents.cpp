//===- TraceEvents.cpp - Chrome trace events as JSON text -----------------===//

#include "TraceEvents.h"

#include "llvm/Support/Format.h"

using namespace llvm;

namespace catalyst::remote {

namespace {

// Microseconds, to the nanosecond, without a detour through a double.
void writeMicros(json::OStream &J, StringRef Key, uint64_t Ns) {
  J.attributeBegin(Key);
  J.rawValue(
      [Ns](raw_ostream &OS) { OS << Ns / 1000 << '.' << format("%03u", unsigned(Ns % 1000)); });
  J.attributeEnd();
}

} // namespace

json::Value jsonText(StringRef S) {
  if (json::isUTF8(S))
    return json::Value(S.str());
  return json::Value(json::fixUTF8(S));
}

raw_ostream &TraceEvents::next() {
  if (!Text.empty())
    OS << ",\n";
  return OS;
}

void TraceEvents::span(StringRef Name, StringRef Category, TraceTrack Where, uint64_t StartNs,
                       uint64_t DurationNs, ArgWriter Args) {
  json::OStream J(next());
  J.object([&] {
    J.attribute("name", jsonText(Name));
    J.attribute("cat", Category);
    J.attribute("ph", "X");
    J.attribute("pid", Where.Pid);
    J.attribute("tid", Where.Tid);
    writeMicros(J, "ts", StartNs);
    writeMicros(J, "dur", DurationNs);
    if (Args)
      J.attributeObject("args", [&] { Args(J); });
  });
}

void TraceEvents::metadata(StringRef Kind, TraceTrack Where, StringRef Name) {
  json::OStream J(next());
  J.object([&] {
    J.attribute("name", Kind);
    J.attribute("ph", "M");
    J.attribute("pid", Where.Pid);
    J.attribute("tid", Where.Tid);
    J.attributeObject("args", [&] { J.attribute("name", jsonText(Name)); });
  });
}

void TraceEvents::processName(uint64_t Pid, StringRef Name) {
  metadata("process_name", {Pid, Pid}, Name);
}

void TraceEvents::threadName(TraceTrack Where, StringRef Name) {
  metadata("thread_name", Where, Name);
}

} // namespace catalyst::remote
