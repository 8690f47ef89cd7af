#include "controller/dlio/dlio_plan.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

// Smoke sizes: what fits a 2-core machine in seconds.
constexpr uint64_t kSmokeFiles = 8;
constexpr uint64_t kSmokeSamplesPerFile = 2;
constexpr uint64_t kSmokeRecordBytes = uint64_t{2} << 20;
constexpr double kSmokeComputeSeconds = 0.01;
constexpr uint32_t kSmokeReadThreads = 2;
constexpr uint64_t kSmokeShardBytes = uint64_t{4} << 20;
constexpr uint32_t kSmokeCheckpoints = 2;

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

// A TOML float: always with a point or exponent.
std::string Float(double v) {
  std::string s = absl::StrFormat("%.6g", v);
  if (!absl::StrContains(s, ".") && !absl::StrContains(s, "e")) s += ".0";
  return s;
}

// The workload after --smoke: each change a note.
DlioConfig Shrunk(const DlioConfig& in, const DlioPlanOptions& o, std::vector<std::string>* notes) {
  DlioConfig c = in;
  auto cap = [notes](const char* what, auto* v, auto max) {
    if (*v <= max) return;
    notes->push_back(absl::StrCat("--smoke: ", what, " ", *v, " -> ", max));
    *v = max;
  };
  cap("dataset.num_files_train", &c.num_files_train, kSmokeFiles);
  cap("dataset.num_samples_per_file", &c.num_samples_per_file, kSmokeSamplesPerFile);
  cap("dataset.record_length_bytes", &c.record_length_bytes, kSmokeRecordBytes);
  cap("dataset.record_length_bytes_stdev", &c.record_length_bytes_stdev, uint64_t{0});
  cap("train.epochs", &c.epochs, uint32_t{1});
  cap("train.computation_time", &c.computation_time_seconds, kSmokeComputeSeconds);
  cap("train.computation_time_stdev", &c.computation_time_stdev_seconds, 0.0);
  cap("reader.read_threads", &c.read_threads, kSmokeReadThreads);
  cap("checkpoint.checkpoint_after_epoch", &c.checkpoint_after_epoch, c.epochs);
  // Every accelerator gets at least one batch (DLIO's max_steps >= 1).
  const uint64_t ranks = uint64_t{std::max(o.hosts, 2u)} * o.accelerators_per_host;
  const uint64_t per_rank = std::max<uint64_t>(1, c.num_files_train * c.num_samples_per_file /
                                                      ranks);
  cap("reader.batch_size", &c.batch_size, static_cast<uint32_t>(std::min<uint64_t>(per_rank,
                                                                                     1000000)));
  return c;
}

// How many checkpoints a run writes: MLPerf's num_checkpoints_write, or
// DLIO's CNN rule (one after checkpoint_after_epoch, then every
// epochs_between_checkpoints epochs up to the last epoch).
uint32_t CheckpointsWritten(const DlioConfig& c) {
  if (c.num_checkpoints_write > 0) return c.num_checkpoints_write;
  if (!c.train) return 1;
  if (c.checkpoint_after_epoch > c.epochs) return 0;
  return 1 + (c.epochs - c.checkpoint_after_epoch) / c.epochs_between_checkpoints;
}

void Dataset(const DlioConfig& c, const std::string& dir, std::string* t) {
  absl::StrAppendFormat(t, "dir = %s\nformat = %s\nnum_files = %u\nsamples_per_file = %u\n",
                        Quoted(dir), Quoted(c.format), c.num_files_train, c.num_samples_per_file);
  absl::StrAppendFormat(t, "record_size = \"%u\"\n", c.record_length_bytes);
  if (c.record_length_bytes_stdev > 0) {
    absl::StrAppendFormat(t, "record_size_stdev = \"%u\"\n", c.record_length_bytes_stdev);
  }
  if (c.file_prefix != "img") absl::StrAppendFormat(t, "file_prefix = %s\n", Quoted(c.file_prefix));
}

void TrainPhase(const DlioConfig& c, const DlioPlanOptions& o, std::string* t) {
  absl::StrAppendFormat(t, "\n[[phase]]\nname = \"train\"\nkind = \"train\"\ntasks_per_agent = %u\n",
                        o.accelerators_per_host);
  Dataset(c, DlioDataDir(c, o), t);
  absl::StrAppendFormat(t, "epochs = %u\nbatch_size = %u\nread_threads = %u\nprefetch_batches = %u\n",
                        c.epochs, c.batch_size, c.read_threads, c.prefetch_size);
  absl::StrAppendFormat(t, "computation_time_seconds = %s\n", Float(c.computation_time_seconds));
  if (c.computation_time_stdev_seconds > 0) {
    absl::StrAppendFormat(t, "computation_time_stdev_seconds = %s\n",
                          Float(c.computation_time_stdev_seconds));
  }
  absl::StrAppendFormat(t, "file_shuffle = %s\nsample_shuffle = %s\nshuffle_seed = %u\n",
                        Quoted(c.file_shuffle), Quoted(c.sample_shuffle), c.seed);
  if (c.computation_time_seconds > 0) {
    absl::StrAppendFormat(t, "au_threshold = %s\n", Float(c.au_threshold));
  }
  if (c.total_training_steps > 0) {
    absl::StrAppendFormat(t, "total_training_steps = %u\n", c.total_training_steps);
  }
}

void CheckpointPhase(const DlioConfig& c, const DlioPlanOptions& o, const char* op,
                     uint32_t count, std::string* t) {
  absl::StrAppendFormat(t,
                        "\n[[phase]]\nname = \"checkpoint-%s\"\nkind = \"checkpoint\"\n"
                        "tasks_per_agent = %u\ndir = %s\ncheckpoint_op = \"%s\"\n",
                        op, o.accelerators_per_host, Quoted(DlioCheckpointDir(c, o)), op);
  const std::string model = DlioCheckpointModel(c.model_name);
  if (o.smoke) {
    absl::StrAppendFormat(t, "shard_size = \"%u\"\n", kSmokeShardBytes);
  } else if (!model.empty()) {
    absl::StrAppendFormat(t, "model = \"%s\"\n", model);
  } else {
    absl::StrAppendFormat(t, "shard_size = \"%u\"\n", c.model_size_bytes);
  }
  absl::StrAppendFormat(t, "checkpoints = %u\n", count);
  if (std::string_view(op) == "write") {
    absl::StrAppendFormat(t, "fsync = %s\n", c.checkpoint_fsync ? "true" : "false");
    if (!o.smoke) absl::StrAppendFormat(t, "keep = true\n");  // a trial removes them
  }
}

// "./a//b/" -> "a/b"; "" and "." -> "".
std::string Normal(const std::string& path) {
  std::string n = std::filesystem::path(path).lexically_normal().string();
  while (n.size() > 1 && n.back() == '/') n.pop_back();
  return n == "." ? "" : n;
}

}  // namespace

std::string DlioDataDir(const DlioConfig& c, const DlioPlanOptions& o) {
  std::string d = o.data_dir.empty() ? c.data_folder : o.data_dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

std::string DlioCheckpointDir(const DlioConfig& c, const DlioPlanOptions& o) {
  const std::string folder = Normal(c.checkpoint_folder);
  if (absl::StartsWith(folder, "/")) return folder;
  const std::string data = DlioDataDir(c, o);
  if (folder.empty()) return data;
  return data == "/" ? "/" + folder : data + "/" + folder;
}

absl::Status CheckDlioCheckpointFolder(const DlioConfig& c) {
  const std::string folder = Normal(c.checkpoint_folder);
  if (folder == ".." || absl::StartsWith(folder, "../")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: checkpoint.checkpoint_folder %s: a relative checkpoint folder is placed below the "
        "dataset's folder (dataset.data_folder or --data-dir), and this one climbs out of it; "
        "give an absolute path",
        c.path, c.checkpoint_folder));
  }
  return absl::OkStatus();
}

DlioPlan DlioToPlan(const DlioConfig& config, const DlioPlanOptions& o) {
  DlioPlan plan;
  const DlioConfig c = o.smoke ? Shrunk(config, o, &plan.notes) : config;
  std::string& t = plan.toml;
  absl::StrAppendFormat(&t, "# lockstep dlio %s: DLIO's workload as a Lockstep plan\n[run]\n",
                        c.path);
  absl::StrAppendFormat(&t, "name = %s\n",
                        Quoted(absl::StrCat("dlio-", c.model_name.empty() ? "workload"
                                                                           : c.model_name)));
  if (c.generate_data && !o.train_only) {
    absl::StrAppendFormat(&t, "\n[[phase]]\nname = \"datagen\"\nkind = \"datagen\"\n"
                              "tasks_per_agent = %u\n",
                          o.accelerators_per_host);
    Dataset(c, DlioDataDir(c, o), &t);
    if (!o.smoke || o.later_runs_read_dataset) t += "keep = true\n";
  }
  if (o.smoke) {
    plan.notes.push_back(
        o.later_runs_read_dataset
            ? "--smoke: the checkpoints are removed at the end; the dataset stays for the "
              "later steps"
            : "--smoke: what the run writes (dataset, checkpoints) is removed at its end");
  }
  if (c.train || o.train_only) TrainPhase(c, o, &t);
  if (!c.checkpoint || o.train_only) return plan;
  uint32_t writes = CheckpointsWritten(c);
  if (writes == 0) {
    plan.notes.push_back(absl::StrFormat(
        "no checkpoint: checkpoint.checkpoint_after_epoch %u is after the last epoch (%u)",
        c.checkpoint_after_epoch, c.epochs));
    return plan;
  }
  uint32_t reads = c.num_checkpoints_read;
  if (o.smoke) {
    if (writes > kSmokeCheckpoints) {
      plan.notes.push_back(absl::StrFormat("--smoke: checkpoints %u -> %u, shards of %u MiB per "
                                           "rank instead of the model's",
                                           writes, kSmokeCheckpoints, kSmokeShardBytes >> 20));
      writes = kSmokeCheckpoints;
    } else {
      plan.notes.push_back(absl::StrFormat("--smoke: shards of %u MiB per rank instead of the "
                                           "model's",
                                           kSmokeShardBytes >> 20));
    }
  }
  if (reads > writes) {
    plan.notes.push_back(absl::StrFormat("checkpoint.num_checkpoints_read %u -> %u: only %u are "
                                         "written",
                                         reads, writes, writes));
    reads = writes;
  }
  CheckpointPhase(c, o, "write", writes, &t);
  if (reads > 0) CheckpointPhase(c, o, "read", reads, &t);
  return plan;
}

}  // namespace lockstep
