// The dataset of the AI workloads: what DATAGEN writes and TRAIN reads (and
// the controller sizes before it is written), laid
// out and named as DLIO (argonne-lcf/dlio_benchmark) lays out and names its
// training data, and the order in which each simulated accelerator reads it.
//
// Names (data_generator.py): <dir>/train/<prefix>_<i>_of_<n>.<ext>, i from 0,
// zero-padded to the digits of n ("img_007_of_168.npz"); no subfolders.
//
// Formats (PhaseSpec.dataset_format):
//   NPZ      what numpy.savez(f, x=records, y=labels) writes, as DLIO's NPZ
//            generator does: a zip (stored, zip64 headers as numpy forces
//            them) of x.npy, uint8 of shape (d, d, samples) with d =
//            floor(sqrt(record size)) as DLIO derives its dimension, and
//            y.npy, int64 zeros, one per sample. A sample is d*d bytes.
//   RECORDS  samples of the record size back to back, nothing else.
// A record_stdev_bytes spread draws one record size per file (normal, at
// least 1 byte) from (pattern_seed, file), as DLIO draws one dimension per
// file. The bytes are Lockstep's data pattern, not numpy's random ones.
//
// Order (config.py, the index sampler with seed_change_epoch): the dataset's
// global samples g = 0 .. files*samples_per_file-1 are split into
// ceil(total/T) contiguous ones per rank; in epoch e (1-based) the file list
// is shuffled with seed shuffle_seed + e (file_shuffle) and each rank's
// samples with the same seed (sample_shuffle); sample g is sample
// g % samples_per_file of file order[g / samples_per_file]. Every rank draws
// the same file order, so the ranks of all agents together read every sample
// once per epoch. The permutations are std::mt19937_64's, not numpy's.
#ifndef LOCKSTEP_COMMON_DATASET_H_
#define LOCKSTEP_COMMON_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// "<dir>/train".
std::string DatasetTrainDir(const std::string& dir);

// DLIO's name of file `index` (see above).
std::string DatasetFilePath(const std::string& dir, const v1::PhaseSpec& spec, uint64_t index);

// "npz" or "rec".
const char* DatasetExtension(v1::DatasetFormat format);

// Where the samples of one file lie.
struct DatasetFileLayout {
  uint64_t file_bytes = 0;
  uint64_t sample_bytes = 0;  // NPZ: d*d
  uint64_t samples = 0;
  uint64_t data_offset = 0;   // of x's data (NPZ), 0 (RECORDS)
  uint64_t data_bytes = 0;    // samples * sample_bytes
  uint32_t dim = 0;           // NPZ's d
};
DatasetFileLayout DatasetFileLayoutOf(const v1::PhaseSpec& spec, uint64_t index);

// The record size of file `index` before the NPZ square: record_bytes, or
// the file's draw with record_stdev_bytes.
uint64_t DatasetRecordBytes(const v1::PhaseSpec& spec, uint64_t index);

// Sum of file_bytes over the dataset.
uint64_t DatasetBytes(const v1::PhaseSpec& spec);

// The dataset keys of a DATAGEN or TRAIN spec: a format, files, samples, a
// record size; InvalidArgument "phase ID: ..." naming the value otherwise.
absl::Status CheckDatasetSpec(const v1::PhaseSpec& spec);

// ---- NPZ containers -----------------------------------------------------
// An NPZ file is Head, x's data (data_bytes), Tail. Head carries x's CRC-32
// and is written again at offset 0 once the data is written (as Python's
// zipfile does on a seekable file).
std::string NpzHead(const DatasetFileLayout& layout, uint32_t x_crc32);
// The CRC-32 of x.npy's own header: x_crc32 is crc32() continued from it
// over the data.
uint32_t NpzDataCrcSeed(const DatasetFileLayout& layout);
std::string NpzTail(const DatasetFileLayout& layout, uint32_t x_crc32);

// ---- The order of an epoch ----------------------------------------------
// The file order of epoch `epoch` (1-based): order[slot] = file index.
std::vector<uint64_t> EpochFileOrder(const v1::PhaseSpec& spec, uint32_t epoch);

// The global samples rank `rank` reads in epoch `epoch`, in order: its
// contiguous share, shuffled with sample_shuffle.
std::vector<uint64_t> EpochRankSamples(const v1::PhaseSpec& spec, uint32_t rank, uint32_t epoch);

// Batches each accelerator runs per epoch (main.py: floor(samples / batch /
// ranks), capped by total_training_steps).
uint64_t StepsPerEpoch(const v1::PhaseSpec& spec);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_DATASET_H_
