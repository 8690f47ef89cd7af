#include "controller/plan/kinds/ai_shared.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/ai_plan.h"

namespace lockstep::kinds {
namespace {

struct ModelSize {
  const char* name;
  uint64_t bytes;
};
constexpr uint64_t kGB = 1'000'000'000;
constexpr ModelSize kModels[] = {
    {"llama3-8b", 105 * kGB},
    {"llama3-70b", 912 * kGB},
    {"llama3-405b", 5290 * kGB},
    {"llama3-1t", 18000 * kGB},
};

bool IsDatasetKind(v1::PhaseKind k) { return k == v1::DATAGEN || k == v1::TRAIN; }

absl::Status ReadFormat(const TableReader& r, AiPhasePlan* a) {
  std::string format;
  RETURN_IF_ERROR(r.String("format", &format));
  if (format.empty()) {
    return r.Missing("format", "add format = \"npz\" (DLIO's unet3d files) or \"records\" (flat "
                               "binary samples)");
  }
  if (format == "npz") {
    a->format = v1::DATASET_FORMAT_NPZ;
  } else if (format == "records") {
    a->format = v1::DATASET_FORMAT_RECORDS;
  } else {
    return r.Error(*r.Get("format"), "format",
                   absl::StrFormat("\"%s\" is not a format Lockstep writes; use \"npz\" (DLIO's "
                                   "npz, one zip of x.npy and y.npy per file) or \"records\" "
                                   "(flat binary samples, for DLIO's other formats)",
                                   format));
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<std::string>& DatasetKeys() {
  static const auto* keys = new std::vector<std::string>{
      "format", "num_files", "samples_per_file", "record_size", "record_size_stdev",
      "file_prefix"};
  return *keys;
}

absl::Status RefuseDatasetKeys(const TableReader& r, const PhasePlan& p) {
  if (IsDatasetKind(p.kind)) return absl::OkStatus();
  for (const std::string& key : DatasetKeys()) {
    if (r.Get(key) == nullptr) continue;
    return r.Error(*r.Get(key), key,
                   absl::StrFormat("applies to datagen and train phases, not to kind = \"%s\"",
                                   PhaseKindName(p.kind)));
  }
  return absl::OkStatus();
}

absl::Status ReadDatasetKeys(const TableReader& r, PhasePlan* p) {
  AiPhasePlan& a = p->Own<AiPhasePlan>();
  RETURN_IF_ERROR(ReadFormat(r, &a));
  if (r.Get("num_files") == nullptr) {
    return r.Missing("num_files", "add num_files = 168 (DLIO's dataset.num_files_train)");
  }
  RETURN_IF_ERROR(r.Uint("num_files", 1, kMaxDatasetFiles, &a.num_files));
  a.dataset_pos = r.Pos(*r.Get("num_files"));
  RETURN_IF_ERROR(r.Uint("samples_per_file", 1, uint64_t{1} << 32, &a.samples_per_file));
  if (r.Get("record_size") == nullptr) {
    return r.Missing("record_size", "add record_size = \"146600k\" (bytes per sample; DLIO's "
                                    "dataset.record_length)");
  }
  RETURN_IF_ERROR(r.Size("record_size", &a.record_bytes));
  if (r.Get("record_size_stdev")) RETURN_IF_ERROR(r.Size("record_size_stdev", &a.record_stdev_bytes));
  RETURN_IF_ERROR(r.FileName("file_prefix", "img", &a.file_prefix));  // DLIO's default
  return absl::OkStatus();
}

void SetAiChunkDefault(PhasePlan* p) {
  p->transfer_bytes = kDefaultAiChunkBytes;
  p->block_bytes = kDefaultAiChunkBytes;
}

absl::Status CheckAiChunk(const TableReader& r, const PhasePlan& p) {
  if (p.transfer_bytes <= kMaxAiChunkBytes) return absl::OkStatus();
  return r.Error(*r.Get("transfer_size"), "transfer_size",
                 absl::StrFormat("%s is more than %s, the most for kind = \"%s\"; lower it",
                                 HumanBytes(p.transfer_bytes), HumanBytes(kMaxAiChunkBytes),
                                 PhaseKindName(p.kind)));
}

absl::Status ReadNumber(const TableReader& r, const char* key, double min, double max,
                        double* out) {
  const toml::node* n = r.Get(key);
  if (n == nullptr) return absl::OkStatus();
  double v = 0;
  if (n->is_integer()) {
    v = static_cast<double>(n->as_integer()->get());
  } else if (n->is_floating_point()) {
    v = n->as_floating_point()->get();
  } else {
    return r.Error(*n, key, absl::StrFormat("expected a number, got %s", TableReader::TypeName(*n)));
  }
  if (!(v >= min && v <= max)) {
    return r.Error(*n, key, absl::StrFormat("%g is not in [%g, %g]", v, min, max));
  }
  *out = v;
  return absl::OkStatus();
}

void FillDatasetSpec(const PhasePlan& p, v1::PhaseSpec* s) {
  const AiPhasePlan& a = p.Own<AiPhasePlan>();
  s->set_dataset_format(a.format);
  s->set_num_files(a.num_files);
  s->set_samples_per_file(a.samples_per_file);
  s->set_record_bytes(a.record_bytes);
  s->set_record_stdev_bytes(a.record_stdev_bytes);
  s->set_file_prefix(a.file_prefix);
}

void WriteDatasetToml(const PhasePlan& p, TomlLines* out) {
  const AiPhasePlan& a = p.Own<AiPhasePlan>();
  out->Uint("transfer_size", p.transfer_bytes);
  out->String("format", a.format == v1::DATASET_FORMAT_RECORDS ? "records" : "npz");
  out->Uint("num_files", a.num_files);
  out->Uint("samples_per_file", a.samples_per_file);
  out->Uint("record_size", a.record_bytes);
  out->Uint("record_size_stdev", a.record_stdev_bytes);
  out->String("file_prefix", a.file_prefix);
}

// A small dataset; each accelerator still gets a batch (train's CapForSmoke).
void CapDatasetForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p) {
  AiPhasePlan& a = p->Own<AiPhasePlan>();
  c->Count("num_files", uint64_t{64}, &a.num_files);
  c->Count("samples_per_file", uint64_t{4}, &a.samples_per_file);
  c->Bytes("record_size", std::min<uint64_t>(o.max_bytes, 1 << 20), &a.record_bytes);
  c->Bytes("record_size_stdev", a.record_bytes / 4, &a.record_stdev_bytes);
}

double DatasetBytesOf(const PhasePlan& p) {
  const AiPhasePlan& a = p.Own<AiPhasePlan>();
  return static_cast<double>(a.num_files) * static_cast<double>(a.samples_per_file) *
         static_cast<double>(a.record_bytes);
}

uint64_t ModelCheckpointBytes(const std::string& model) {
  for (const ModelSize& m : kModels) {
    if (model == m.name) return m.bytes;
  }
  return 0;
}

namespace {

std::string FitKey(const std::string& dir, const std::string& prefix, v1::DatasetFormat f) {
  return absl::StrFormat("%s|%s|%d", dir, prefix, static_cast<int>(f));
}

}  // namespace

std::string DatasetFitKey(const PhasePlan& p) {
  return FitKey(p.dir, p.Own<AiPhasePlan>().file_prefix, p.Own<AiPhasePlan>().format);
}

std::string DatasetFitKey(const v1::PhaseSpec& s) {
  return FitKey(s.dir(), s.file_prefix(), s.dataset_format());
}

void ApplyDatasetFit(const ClientFit& fit, v1::PhaseSpec* s) {
  auto it = fit.counts.find(DatasetFitKey(*s));
  if (it != fit.counts.end()) s->set_num_files(it->second);
}

}  // namespace lockstep::kinds
