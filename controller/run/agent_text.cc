#include "controller/run/agent_text.h"

#include <string>

#include "common/text_escape.h"

namespace lockstep {
namespace {

void Escape(std::string* text) { EscapeInPlaceKeepingLines(text); }

template <typename Repeated>
void EscapeEach(Repeated* texts) {
  for (std::string& text : *texts) Escape(&text);
}

}  // namespace

void EscapeAgentText(v1::TelemetrySummary* t) {
  for (v1::DiskStats& d : *t->mutable_disks()) Escape(d.mutable_device());
  for (v1::NetStats& n : *t->mutable_nets()) Escape(n.mutable_iface());
  for (v1::LustreCounter& c : *t->mutable_lustre()) {
    Escape(c.mutable_source());
    Escape(c.mutable_name());
    Escape(c.mutable_unit());
  }
  EscapeEach(t->mutable_lustre_sources());
  EscapeEach(t->mutable_warnings());
  for (v1::ProcessCpu& p : *t->mutable_top_processes()) Escape(p.mutable_name());
  for (v1::DaemonStats& d : *t->mutable_daemons()) {
    Escape(d.mutable_name());
    Escape(d.mutable_warning());
  }
}

void EscapeAgentText(v1::PhaseResult* result) {
  Escape(result->mutable_error());
  Escape(result->mutable_start_note());
  for (v1::TaskResult& t : *result->mutable_tasks()) {
    Escape(t.mutable_error());
    Escape(t.mutable_file());
    if (t.has_command()) {
      Escape(t.mutable_command()->mutable_user());
      Escape(t.mutable_command()->mutable_stdout_tail());
      Escape(t.mutable_command()->mutable_stderr_tail());
    }
  }
  if (result->has_telemetry()) EscapeAgentText(result->mutable_telemetry());
}

void EscapeAgentText(v1::HostFacts* f) {
  for (std::string* text : {f->mutable_hostname(), f->mutable_agent_version(), f->mutable_kernel(),
                            f->mutable_os(), f->mutable_machine(), f->mutable_clock_sync(),
                            f->mutable_lustre_version(), f->mutable_cpu_model(),
                            f->mutable_thread_limit_name()}) {
    Escape(text);
  }
  for (v1::RootFacts& r : *f->mutable_roots()) {
    Escape(r.mutable_fs_type());
    Escape(r.mutable_fs_name());
    Escape(r.mutable_fs_version());
  }
  for (v1::NicFacts& n : *f->mutable_nics()) {
    Escape(n.mutable_name());
    Escape(n.mutable_kind());
  }
  for (v1::BlockDeviceFacts& d : *f->mutable_block_devices()) {
    Escape(d.mutable_name());
    Escape(d.mutable_model());
  }
  for (v1::DaemonFacts& d : *f->mutable_daemons()) {
    Escape(d.mutable_version());
    Escape(d.mutable_warning());
  }
  for (auto& [key, value] : *f->mutable_extra()) Escape(&value);
}

void EscapeAgentText(v1::PrepareReply* reply) {
  Escape(reply->mutable_stripe_layout());
  Escape(reply->mutable_checksums_before());
  Escape(reply->mutable_fs_version());
  if (reply->has_layout()) {
    Escape(reply->mutable_layout()->mutable_pool());
    Escape(reply->mutable_layout()->mutable_raw());
  }
}

void EscapeAgentText(v1::CacheReply* reply) {
  Escape(reply->mutable_warning());
  EscapeEach(reply->mutable_daemon_caches());
}

}  // namespace lockstep
