#include "controller/dlio/dlio_config.h"

#include <cmath>
#include <functional>
#include "absl/strings/string_view.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "yaml-cpp/yaml.h"

namespace lockstep {


namespace {

using Setter = std::function<absl::Status(const YAML::Node&, const std::string&, DlioConfig*)>;

struct KeySpec {
  const char* section;
  const char* key;
  Setter set;          // null: accepted, changes nothing
  const char* why = "";  // for an ignored key
};

std::string Where(const std::string& source, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return source;
  return absl::StrFormat("%s:%d:%d", source, m.line + 1, m.column + 1);
}

std::string Text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  return n.IsMap() ? "(a map)" : n.IsSequence() ? "(a list)" : "(nothing)";
}

// "WHAT: VALUE FIX".
absl::Status Bad(const std::string& what, const YAML::Node& n, const std::string& fix) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s %s", what, Text(n), fix));
}

template <typename T>
bool Convert(const YAML::Node& n, T* out) {
  if (!n.IsScalar()) return false;
  try {
    *out = n.as<T>();
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

Setter Bool(bool DlioConfig::*field) {
  return [field](const YAML::Node& n, const std::string& k, DlioConfig* c) -> absl::Status {
    bool v = false;
    if (!Convert(n, &v)) return Bad(k, n, "is not a boolean; write True or False");
    c->*field = v;
    return absl::OkStatus();
  };
}

// A count: a non-negative integer (a float with a fraction is refused).
Setter Uint(uint64_t DlioConfig::*field, uint64_t min) {
  return [field, min](const YAML::Node& n, const std::string& k, DlioConfig* c) -> absl::Status {
    double v = -1;
    if (!Convert(n, &v) || v < static_cast<double>(min) || v != std::floor(v) || v > 1e15) {
      return Bad(k, n, absl::StrFormat("is not a whole number >= %u; write one", min));
    }
    c->*field = static_cast<uint64_t>(v);
    return absl::OkStatus();
  };
}

Setter Uint32(uint32_t DlioConfig::*field, uint32_t min) {
  return [field, min](const YAML::Node& n, const std::string& k, DlioConfig* c) -> absl::Status {
    double v = -1;
    if (!Convert(n, &v) || v < min || v != std::floor(v) || v > 1e6) {
      return Bad(k, n, absl::StrFormat("is not a whole number from %u to 1000000; write one",
                                           min));
    }
    c->*field = static_cast<uint32_t>(v);
    return absl::OkStatus();
  };
}

// Bytes: DLIO's averages have fractions (resnet50: 114660.07); rounded.
Setter Bytes(uint64_t DlioConfig::*field) {
  return [field](const YAML::Node& n, const std::string& k, DlioConfig* c) -> absl::Status {
    double v = -1;
    if (!Convert(n, &v) || v < 0 || v > 1e13) {
      return Bad(k, n, "is not a byte count (0 to 10^13); write the bytes as a number");
    }
    c->*field = static_cast<uint64_t>(std::llround(v));
    return absl::OkStatus();
  };
}

Setter Seconds(double DlioConfig::*field) {
  return [field](const YAML::Node& n, const std::string& k, DlioConfig* c) -> absl::Status {
    double v = -1;
    if (!Convert(n, &v) || !(v >= 0) || v > 3600) {
      return Bad(k, n, "is not a time in seconds from 0 to 3600; write one (0.323)");
    }
    c->*field = v;
    return absl::OkStatus();
  };
}

Setter String(std::string DlioConfig::*field) {
  return [field](const YAML::Node& n, const std::string& k, DlioConfig* c) -> absl::Status {
    std::string v;
    if (!Convert(n, &v) || v.empty()) return Bad(k, n, "is not a non-empty string");
    c->*field = v;
    return absl::OkStatus();
  };
}

Setter Shuffle(std::string DlioConfig::*field) {
  return [field](const YAML::Node& n, const std::string& k, DlioConfig* c) -> absl::Status {
    std::string v;
    Convert(n, &v);
    if (v == "False" || v == "false") v = "off";
    if (v != "off" && v != "seed" && v != "random") {
      return Bad(k, n, "is not a shuffle DLIO knows; write off, seed or random");
    }
    c->*field = v;
    return absl::OkStatus();
  };
}

absl::Status SetFormat(const YAML::Node& n, const std::string& k, DlioConfig* c) {
  std::string v;
  Convert(n, &v);
  if (v == "npz" || v == "records") {
    c->format = v;
    return absl::OkStatus();
  }
  return Bad(k, n,
             "is a format Lockstep does not write; write format: npz (numpy.savez's zip, as "
             "DLIO's unet3d) or format: records (the samples back to back, what a tfrecord, "
             "indexed_binary or mmap_indexed_binary file holds without its framing)");
}

absl::Status SetAu(const YAML::Node& n, const std::string& k, DlioConfig* c) {
  double v = -1;
  if (!Convert(n, &v) || !(v > 0) || v > 1) {
    return Bad(k, n, "is not an AU fraction in (0, 1]; write 0.90 (or 0.70 for cosmoflow)");
  }
  c->au_threshold = v;
  return absl::OkStatus();
}

const std::vector<KeySpec>& Keys() {
  static const std::vector<KeySpec> keys = {
      {"model", "name", String(&DlioConfig::model_name)},
      {"model", "model_size", Bytes(&DlioConfig::model_size_bytes)},
      {"model", "type", nullptr, "the model's kind does not change its I/O"},
      {"model", "num_layers", nullptr, "the checkpoint size comes from the model's name"},
      {"model", "model_datatype", nullptr, "the checkpoint size comes from the model's name"},
      {"model", "optimizer_datatype", nullptr, "the checkpoint size comes from the model's name"},
      {"model", "parallelism", nullptr, "ranks are --accelerators per host"},
      {"model", "transformer", nullptr, "the checkpoint size comes from the model's name"},
      {"workflow", "generate_data", Bool(&DlioConfig::generate_data)},
      {"workflow", "train", Bool(&DlioConfig::train)},
      {"workflow", "checkpoint", Bool(&DlioConfig::checkpoint)},
      {"dataset", "data_folder", String(&DlioConfig::data_folder)},
      {"dataset", "format", SetFormat},
      {"dataset", "file_prefix", String(&DlioConfig::file_prefix)},
      {"dataset", "num_files_train", Uint(&DlioConfig::num_files_train, 1)},
      {"dataset", "num_samples_per_file", Uint(&DlioConfig::num_samples_per_file, 1)},
      {"dataset", "record_length_bytes", Bytes(&DlioConfig::record_length_bytes)},
      {"dataset", "record_length_bytes_stdev", Bytes(&DlioConfig::record_length_bytes_stdev)},
      {"dataset", "record_length_bytes_resize", nullptr,
       "a resize happens in the accelerator's memory, not on storage"},
      {"reader", "batch_size", Uint32(&DlioConfig::batch_size, 1)},
      {"reader", "read_threads", Uint32(&DlioConfig::read_threads, 1)},
      {"reader", "prefetch_size", Uint32(&DlioConfig::prefetch_size, 1)},
      {"reader", "file_shuffle", Shuffle(&DlioConfig::file_shuffle)},
      {"reader", "sample_shuffle", Shuffle(&DlioConfig::sample_shuffle)},
      {"reader", "data_loader", nullptr, "Lockstep's readers are its own threads"},
      {"reader", "computation_threads", nullptr, "the compute is a sleep per batch"},
      {"reader", "dont_use_mmap", nullptr, "Lockstep reads with read(2), never mmap"},
      {"reader", "shuffle_size", nullptr, "a shuffle buffer is in memory only"},
      {"train", "epochs", Uint32(&DlioConfig::epochs, 1)},
      {"train", "computation_time", Seconds(&DlioConfig::computation_time_seconds)},
      {"train", "computation_time_stdev", Seconds(&DlioConfig::computation_time_stdev_seconds)},
      {"train", "total_training_steps", Uint(&DlioConfig::total_training_steps, 1)},
      {"train", "seed", Uint(&DlioConfig::seed, 0)},
      {"checkpoint", "checkpoint_folder", String(&DlioConfig::checkpoint_folder)},
      {"checkpoint", "checkpoint_after_epoch", Uint32(&DlioConfig::checkpoint_after_epoch, 1)},
      {"checkpoint", "epochs_between_checkpoints",
       Uint32(&DlioConfig::epochs_between_checkpoints, 1)},
      {"checkpoint", "num_checkpoints_write", Uint32(&DlioConfig::num_checkpoints_write, 1)},
      {"checkpoint", "num_checkpoints_read", Uint32(&DlioConfig::num_checkpoints_read, 1)},
      {"checkpoint", "fsync", Bool(&DlioConfig::checkpoint_fsync)},
      {"checkpoint", "time_between_checkpoints", nullptr,
       "the checkpoints follow each other without a pause"},
      {"metric", "au", SetAu},
  };
  return keys;
}

constexpr const char* kSections[] = {"model",    "framework", "workflow", "dataset",
                                     "reader",   "train",     "checkpoint", "metric"};

std::string KeysOf(const std::string& section) {
  std::vector<std::string> names;
  for (const KeySpec& k : Keys()) {
    if (section == k.section) names.push_back(k.key);
  }
  return absl::StrJoin(names, ", ");
}

// One key of one section; `where` is FILE:LINE:COL of the value.
absl::Status SetKey(const std::string& section, const std::string& key, const YAML::Node& value,
                    const std::string& where, DlioConfig* c) {
  const std::string name = section + "." + key;
  for (const KeySpec& k : Keys()) {
    if (section != k.section || key != k.key) continue;
    if (!k.set) {
      c->ignored.push_back(absl::StrFormat("%s: %s = %s: accepted, changes nothing (%s)", where,
                                           name, Text(value), k.why));
      return absl::OkStatus();
    }
    absl::Status s = k.set(value, name, c);
    if (s.ok()) return s;
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s", where, s.message()));
  }
  const std::string keys = KeysOf(section);
  if (keys.empty()) {  // an override's section (a file's is checked before)
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: unknown section %s (in %s = %s): lockstep dlio does not run it; use one of %s",
        where, section, name, Text(value), absl::StrJoin(kSections, ", ")));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: unknown key %s (value %s): lockstep dlio does not run it; remove it, or use one "
      "of %s: %s (lockstep dlio --help)",
      where, name, Text(value), section, keys));
}

absl::Status ReadSection(const std::string& source, const std::string& section,
                         const YAML::Node& body, DlioConfig* c) {
  if (section == "framework") {
    if (!Convert(body, &c->framework)) {
      return Bad(Where(source, body) + ": framework", body, "is not pytorch or tensorflow");
    }
    c->ignored.push_back(absl::StrFormat("%s: framework = %s: accepted, changes nothing",
                                         Where(source, body), c->framework));
    return absl::OkStatus();
  }
  if (section == "model" && body.IsScalar()) return SetKey("model", "name", body,
                                                           Where(source, body), c);
  if (!body.IsMap()) {
    return Bad(Where(source, body) + ": " + section, body, "is not a section of keys; indent its keys");
  }
  for (const auto& kv : body) {
    std::string key;
    if (!Convert(kv.first, &key)) {
      return Bad(Where(source, kv.first) + ": " + section, kv.first, "is not a key");
    }
    absl::Status s = SetKey(section, key, kv.second, Where(source, kv.second), c);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// The words a refusal adds when train is on by DLIO's default only (the
// config's workflow does not give train).
std::string TrainByDefault(const YAML::Node& root) {
  const YAML::Node workflow = root["workflow"];
  if (workflow && workflow.IsMap() && workflow["train"]) return "";
  return " (workflow.train is not given: DLIO trains by default; set workflow.train: False "
         "to run without training)";
}

}  // namespace

absl::StatusOr<DlioConfig> ParseDlioConfig(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d:%d: not YAML: %s; fix the file", source, e.mark.line + 1, e.mark.column + 1,
        e.msg));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not a DLIO workload (a map of sections model, workflow, dataset, ...); give one of "
        "deploy/plans/dlio/*.yaml",
        source));
  }
  DlioConfig c;
  c.path = source;
  for (const auto& kv : root) {
    std::string section;
    Convert(kv.first, &section);
    bool known = false;
    for (const char* s : kSections) known = known || section == s;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: unknown section %s: lockstep dlio does not run it; remove it, or use one of %s",
          Where(source, kv.first), section, absl::StrJoin(kSections, ", ")));
    }
    absl::Status s = ReadSection(source, section, kv.second, &c);
    if (!s.ok()) return s;
  }
  if ((c.generate_data || c.train) && c.format.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: workflow %s but dataset.format is missing; add format: npz (or records) under "
        "dataset%s",
        source, c.generate_data ? "generates a dataset" : "trains on a dataset",
        c.generate_data ? "" : TrainByDefault(root)));
  }
  if ((c.generate_data || c.train) && (c.num_files_train == 0 || c.record_length_bytes == 0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: dataset.num_files_train and dataset.record_length_bytes are needed for "
        "generate_data or train; add both under dataset%s",
        source, c.generate_data ? "" : TrainByDefault(root)));
  }
  if (c.checkpoint && c.model_size_bytes == 0 && DlioCheckpointModel(c.model_name).empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: workflow.checkpoint = True but the checkpoint's size is unknown: model.name %s is "
        "not one of MLPerf Storage's llama3 models (llama3_8b, llama3_70b, llama3_405b, "
        "llama3_1t) and model.model_size is missing; add model_size (bytes) under model",
        source, c.model_name.empty() ? "(none)" : c.model_name));
  }
  if (!c.generate_data && !c.train && !c.checkpoint) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: workflow runs nothing (generate_data, train and checkpoint are all False); set "
        "one of them to True",
        source));
  }
  return c;
}

std::string DlioCheckpointModel(const std::string& model_name) {
  const std::string n = absl::AsciiStrToLower(model_name);
  if (!absl::StartsWith(n, "llama")) return "";
  for (const char* size : {"405b", "70b", "8b", "1t"}) {
    for (const char* sep : {"_", "-"}) {
      const std::string tail = absl::StrCat(sep, size);
      if (absl::EndsWith(n, tail) || absl::StrContains(n, tail + "_")) {
        return absl::StrCat("llama3-", size);
      }
    }
  }
  return "";
}

bool IsDlioOverride(const std::string& arg) {
  absl::string_view a = arg;
  while (!a.empty() && a.front() == '+') a.remove_prefix(1);
  return absl::StartsWith(a, "workload.") && absl::StrContains(a, "=");
}

absl::Status ApplyDlioOverride(const std::string& arg, DlioConfig* config) {
  absl::string_view a = arg;
  while (!a.empty() && a.front() == '+') a.remove_prefix(1);
  const size_t eq = a.find('=');
  const std::string path(a.substr(0, eq));
  const std::vector<std::string> parts = absl::StrSplit(path, '.');
  if (eq == absl::string_view::npos || parts.size() != 3 || parts[0] != "workload") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "override %s: not workload.SECTION.KEY=VALUE; write e.g. "
        "++workload.dataset.data_folder=/mnt/data",
        arg));
  }
  YAML::Node value;
  try {
    value = YAML::Load(std::string(a.substr(eq + 1)));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrFormat("override %s: the value is not YAML: %s", arg, e.msg));
  }
  if (parts[1] == "framework") return absl::OkStatus();
  return SetKey(parts[1], parts[2], value, "override " + arg, config);
}

}  // namespace lockstep
