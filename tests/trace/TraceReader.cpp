//===- TraceReader.cpp - Reading a trace file back in tests ---------------===//

#include "TraceReader.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace catalyst::remote::test {

namespace {

Error bad(size_t I, const Twine &What) {
  return createStringError(inconvertibleErrorCode(), "event " + Twine(I) + ": " + What);
}

Error readSpan(const json::Object &E, size_t I, Trace &T) {
  auto Name = E.getString("name");
  auto Cat = E.getString("cat");
  auto Pid = E.getInteger("pid");
  auto Tid = E.getInteger("tid");
  auto Ts = E.getNumber("ts");
  auto Dur = E.getNumber("dur");
  if (!Name || !Cat || !Pid || !Tid || !Ts || !Dur)
    return bad(I, "a complete event lacks name, cat, pid, tid, ts or dur");
  if (*Pid <= 0 || *Tid <= 0 || *Ts < 0 || *Dur < 0)
    return bad(I, "negative or zero pid, tid, ts or dur");
  TraceSpan S{Name->str(), Cat->str(), *Pid, *Tid, *Ts, *Dur, {}};
  if (const json::Object *Args = E.getObject("args"))
    S.Args = *Args;
  T.Spans.push_back(std::move(S));
  return Error::success();
}

Error readMetadata(const json::Object &E, size_t I, Trace &T) {
  auto Kind = E.getString("name");
  auto Pid = E.getInteger("pid");
  auto Tid = E.getInteger("tid");
  const json::Object *Args = E.getObject("args");
  auto Name = Args ? Args->getString("name") : std::nullopt;
  if (!Kind || !Pid || !Tid || !Name)
    return bad(I, "a metadata event lacks name, pid, tid or args.name");
  if (*Kind == "process_name")
    T.Processes[*Pid] = Name->str();
  else if (*Kind == "thread_name")
    T.Threads[{*Pid, *Tid}] = Name->str();
  else
    return bad(I, "unknown metadata " + *Kind);
  return Error::success();
}

} // namespace

int64_t TraceSpan::intArg(StringRef Key) const {
  return Args.getInteger(Key).value_or(-1);
}

std::string TraceSpan::textArg(StringRef Key) const {
  return Args.getString(Key).value_or("").str();
}

std::vector<const TraceSpan *> Trace::named(StringRef Prefix) const {
  std::vector<const TraceSpan *> Out;
  for (const TraceSpan &S : Spans)
    if (StringRef(S.Name).starts_with(Prefix))
      Out.push_back(&S);
  return Out;
}

std::vector<const TraceSpan *> Trace::within(int64_t Pid, int64_t Tid, double From, double To,
                                             double Slack) const {
  std::vector<const TraceSpan *> Out;
  for (const TraceSpan &S : Spans)
    if (S.Pid == Pid && S.Tid == Tid && S.Start >= From - Slack && S.end() <= To + Slack)
      Out.push_back(&S);
  return Out;
}

Expected<Trace> readTrace(const std::string &Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read %s", Path.c_str());
  auto Doc = json::parse((*Buf)->getBuffer());
  if (!Doc)
    return createStringError(inconvertibleErrorCode(), "%s is not JSON: %s", Path.c_str(),
                             toString(Doc.takeError()).c_str());
  const json::Object *Top = Doc->getAsObject();
  const json::Array *Events = Top ? Top->getArray("traceEvents") : nullptr;
  if (!Events)
    return createStringError(inconvertibleErrorCode(), "%s has no traceEvents array", Path.c_str());
  Trace T;
  for (size_t I = 0; I < Events->size(); ++I) {
    const json::Object *E = (*Events)[I].getAsObject();
    auto Ph = E ? E->getString("ph") : std::nullopt;
    Error Err = !Ph          ? bad(I, "not an object with a ph")
                : *Ph == "X" ? readSpan(*E, I, T)
                : *Ph == "M" ? readMetadata(*E, I, T)
                             : bad(I, "unexpected ph " + *Ph);
    if (Err)
      return Err;
  }
  return T;
}

} // namespace catalyst::remote::test
