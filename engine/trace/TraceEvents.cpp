//===- TraceEvents.cpp - Chrome trace events as JSON text -----------------===//

#include "TraceEvents.h"

#include "llvm/Support/JSON.h"

#include <charconv>

using namespace llvm;

namespace catalyst::remote {

namespace {

template <typename T> void appendNumber(std::string &Out, T V) {
  char Buf[24];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), V);
  Out.append(Buf, R.ptr);
}

// Microseconds, to the nanosecond, without a detour through a double.
void appendMicros(std::string &Out, uint64_t Ns) {
  appendNumber(Out, Ns / 1000);
  char Frac[4] = {'.', char('0' + Ns % 1000 / 100), char('0' + Ns % 100 / 10), char('0' + Ns % 10)};
  Out.append(Frac, 4);
}

bool needsEscape(char C) {
  return static_cast<unsigned char>(C) < 0x20 || C == '"' || C == '\\';
}

void appendEscaped(std::string &Out, StringRef S) {
  for (char C : S) {
    if (!needsEscape(C)) {
      Out += C;
      continue;
    }
    switch (C) {
    case '"':
      Out += "\\\"";
      break;
    case '\\':
      Out += "\\\\";
      break;
    case '\n':
      Out += "\\n";
      break;
    case '\t':
      Out += "\\t";
      break;
    default: {
      const char *Hex = "0123456789abcdef";
      char U[6] = {'\\', 'u', '0', '0', Hex[(C >> 4) & 0xf], Hex[C & 0xf]};
      Out.append(U, 6);
    }
    }
  }
}

} // namespace

void appendJsonString(std::string &Out, StringRef S) {
  Out += '"';
  bool Plain = true;
  for (char C : S)
    Plain &= !needsEscape(C) && static_cast<unsigned char>(C) < 0x80;
  if (Plain)
    Out.append(S.data(), S.size());
  else if (json::isUTF8(S))
    appendEscaped(Out, S);
  else
    appendEscaped(Out, json::fixUTF8(S));
  Out += '"';
}

void TraceArgs::key(StringRef Key) {
  Out += First ? "\"" : ",\"";
  First = false;
  Out.append(Key.data(), Key.size());
  Out += "\":";
}

void TraceArgs::add(StringRef Key, uint64_t Value) {
  key(Key);
  appendNumber(Out, Value);
}

void TraceArgs::add(StringRef Key, int64_t Value) {
  key(Key);
  appendNumber(Out, Value);
}

void TraceArgs::add(StringRef Key, bool Value) {
  key(Key);
  Out += Value ? "true" : "false";
}

void TraceArgs::add(StringRef Key, StringRef Value) {
  key(Key);
  appendJsonString(Out, Value);
}

void TraceEvents::begin(StringRef Name, StringRef Phase, TraceTrack Where) {
  if (!Text.empty())
    Text += ",\n";
  Text += "{\"name\":";
  appendJsonString(Text, Name);
  Text += ",\"ph\":\"";
  Text += Phase;
  Text += "\",\"pid\":";
  appendNumber(Text, Where.Pid);
  Text += ",\"tid\":";
  appendNumber(Text, Where.Tid);
}

void TraceEvents::span(StringRef Name, StringRef Category, TraceTrack Where, uint64_t StartNs,
                       uint64_t DurationNs, ArgWriter Args) {
  begin(Name, "X", Where);
  Text += ",\"cat\":\"";
  Text += Category;
  Text += "\",\"ts\":";
  appendMicros(Text, StartNs);
  Text += ",\"dur\":";
  appendMicros(Text, DurationNs);
  if (Args) {
    Text += ",\"args\":{";
    TraceArgs A(Text);
    Args(A);
    Text += '}';
  }
  Text += '}';
}

void TraceEvents::metadata(StringRef Kind, TraceTrack Where, StringRef Name) {
  begin(Kind, "M", Where);
  Text += ",\"args\":{\"name\":";
  appendJsonString(Text, Name);
  Text += "}}";
}

void TraceEvents::processName(uint64_t Pid, StringRef Name) {
  metadata("process_name", {Pid, Pid}, Name);
}

void TraceEvents::threadName(TraceTrack Where, StringRef Name) {
  metadata("thread_name", Where, Name);
}

} // namespace catalyst::remote
