#include "common/dataset.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "absl/strings/str_format.h"
#include "common/checked_math.h"
#include "common/limits.h"
#include "common/mix.h"

namespace lockstep {
namespace {

absl::Status SpecError(const v1::PhaseSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("phase %s: %s", spec.phase_id(), why));
}

// Python's zipfile.ZIP64_LIMIT: sizes and offsets above it need zip64 fields.
constexpr uint64_t kZip64Limit = (uint64_t{1} << 31) - 1;
constexpr uint16_t kZip64Version = 45;  // zipfile.ZIP64_VERSION
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, a fixed stamp
constexpr uint16_t kDosTime = 0;
constexpr size_t kNpyAlign = 64;  // numpy.lib.format.ARRAY_ALIGN

void Put16(std::string* s, uint16_t v) {
  s->push_back(static_cast<char>(v & 0xff));
  s->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void Put64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// numpy.lib.format's version 1.0 header of an array: magic, version, length,
// the dict padded with spaces to a multiple of 64 and ended by '\n'.
std::string NpyHeader(const std::string& descr, const std::string& shape) {
  std::string dict = absl::StrFormat("{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                                     descr, shape);
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((kNpyAlign - unpadded % kNpyAlign) % kNpyAlign, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  Put16(&out, static_cast<uint16_t>(dict.size()));
  return out + dict;
}

std::string XHeader(const DatasetFileLayout& l) {
  return NpyHeader("|u1", absl::StrFormat("(%u, %u, %u)", l.dim, l.dim, l.samples));
}
std::string YHeader(const DatasetFileLayout& l) {
  return NpyHeader("<i8", absl::StrFormat("(%u,)", l.samples));
}

// zipfile's local header with force_zip64 (numpy's savez): sizes in the
// zip64 extra field, 0xffffffff in the header.
std::string LocalHeader(const std::string& name, uint64_t size, uint32_t crc) {
  std::string h;
  Put32(&h, 0x04034b50);
  Put16(&h, kZip64Version);
  Put16(&h, 0);  // flags
  Put16(&h, 0);  // stored
  Put16(&h, kDosTime);
  Put16(&h, kDosDate);
  Put32(&h, crc);
  Put32(&h, 0xffffffff);
  Put32(&h, 0xffffffff);
  Put16(&h, static_cast<uint16_t>(name.size()));
  Put16(&h, 20);
  h += name;
  Put16(&h, 1);
  Put16(&h, 16);
  Put64(&h, size);
  Put64(&h, size);
  return h;
}

// The central directory entry, zip64 fields only where zipfile puts them.
std::string CentralEntry(const std::string& name, uint64_t size, uint32_t crc, uint64_t offset) {
  std::string extra;
  const bool big = size > kZip64Limit;
  const bool far = offset > kZip64Limit;
  if (big) {
    Put64(&extra, size);
    Put64(&extra, size);
  }
  if (far) Put64(&extra, offset);
  std::string e;
  Put32(&e, 0x02014b50);
  Put16(&e, (3 << 8) | kZip64Version);  // made by: Unix
  Put16(&e, kZip64Version);
  Put16(&e, 0);
  Put16(&e, 0);
  Put16(&e, kDosTime);
  Put16(&e, kDosDate);
  Put32(&e, crc);
  Put32(&e, big ? 0xffffffff : static_cast<uint32_t>(size));
  Put32(&e, big ? 0xffffffff : static_cast<uint32_t>(size));
  Put16(&e, static_cast<uint16_t>(name.size()));
  Put16(&e, static_cast<uint16_t>(extra.empty() ? 0 : extra.size() + 4));
  Put16(&e, 0);  // comment
  Put16(&e, 0);  // disk
  Put16(&e, 0);  // internal attributes
  Put32(&e, 0600u << 16);  // external: -rw------- as ZipFile.open(mode="w")
  Put32(&e, far ? 0xffffffff : static_cast<uint32_t>(offset));
  e += name;
  if (!extra.empty()) {
    Put16(&e, 1);
    Put16(&e, static_cast<uint16_t>(extra.size()));
    e += extra;
  }
  return e;
}

// The end records: zip64 ones when the directory lies beyond the limit.
std::string EndRecords(uint64_t cd_offset, uint64_t cd_bytes) {
  std::string e;
  const bool zip64 = cd_offset > kZip64Limit || cd_bytes > kZip64Limit;
  if (zip64) {
    const uint64_t record_offset = cd_offset + cd_bytes;
    Put32(&e, 0x06064b50);
    Put64(&e, 44);
    Put16(&e, kZip64Version);
    Put16(&e, kZip64Version);
    Put32(&e, 0);
    Put32(&e, 0);
    Put64(&e, 2);
    Put64(&e, 2);
    Put64(&e, cd_bytes);
    Put64(&e, cd_offset);
    Put32(&e, 0x07064b50);
    Put32(&e, 0);
    Put64(&e, record_offset);
    Put32(&e, 1);
  }
  Put32(&e, 0x06054b50);
  Put16(&e, 0);
  Put16(&e, 0);
  Put16(&e, 2);
  Put16(&e, 2);
  Put32(&e, zip64 ? 0xffffffff : static_cast<uint32_t>(cd_bytes));
  Put32(&e, zip64 ? 0xffffffff : static_cast<uint32_t>(cd_offset));
  Put16(&e, 0);
  return e;
}

// The y entry's CRC: its header and 8 zero bytes per sample.
uint32_t YCrc(const std::string& y_header, uint64_t samples) {
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(y_header.data()),
                    static_cast<uInt>(y_header.size()));
  static const char kZeros[4096] = {};
  uint64_t left = samples * 8;
  while (left > 0) {
    const uint64_t n = std::min<uint64_t>(left, sizeof(kZeros));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(kZeros), static_cast<uInt>(n));
    left -= n;
  }
  return static_cast<uint32_t>(crc);
}

// Everything after x's data but y's zeros, and where it starts.
struct TailParts {
  std::string y_local;   // local header + npy header of y
  std::string directory; // central directory + end records
};

TailParts BuildTail(const DatasetFileLayout& l, uint32_t x_crc, bool with_crc) {
  const std::string yh = YHeader(l);
  const uint64_t x_size = XHeader(l).size() + l.data_bytes;
  const uint64_t y_size = yh.size() + 8 * l.samples;
  const uint64_t y_offset = l.data_offset + l.data_bytes;
  const uint32_t y_crc = with_crc ? YCrc(yh, l.samples) : 0;
  TailParts t;
  t.y_local = LocalHeader("y.npy", y_size, y_crc) + yh;
  const uint64_t cd_offset = y_offset + t.y_local.size() + 8 * l.samples;
  const std::string cd =
      CentralEntry("x.npy", x_size, x_crc, 0) + CentralEntry("y.npy", y_size, y_crc, y_offset);
  t.directory = cd + EndRecords(cd_offset, cd.size());
  return t;
}

// An integer square root: the largest d with d*d <= v.
uint64_t FloorSqrt(uint64_t v) {
  uint64_t d = static_cast<uint64_t>(std::sqrt(static_cast<double>(v)));
  while (d * d > v) --d;
  while ((d + 1) * (d + 1) <= v) ++d;
  return d;
}

}  // namespace

std::string DatasetTrainDir(const std::string& dir) { return dir + "/train"; }

const char* DatasetExtension(v1::DatasetFormat format) {
  return format == v1::DATASET_FORMAT_NPZ ? "npz" : "rec";
}

std::string DatasetFilePath(const std::string& dir, const v1::PhaseSpec& spec, uint64_t index) {
  const std::string n = absl::StrFormat("%u", spec.num_files());
  std::string i = absl::StrFormat("%u", index);
  if (i.size() < n.size()) i.insert(0, n.size() - i.size(), '0');  // utility.add_padding
  const std::string prefix = spec.file_prefix().empty() ? "img" : spec.file_prefix();
  return absl::StrFormat("%s/%s_%s_of_%s.%s", DatasetTrainDir(dir), prefix, i, n,
                         DatasetExtension(spec.dataset_format()));
}

uint64_t DatasetRecordBytes(const v1::PhaseSpec& spec, uint64_t index) {
  if (spec.record_stdev_bytes() == 0) return spec.record_bytes();
  // Box-Muller from two uniforms of (pattern_seed, file).
  const uint64_t a = Mix64(spec.pattern_seed() ^ Mix64(index * 2 + 0x5eed));
  const uint64_t b = Mix64(spec.pattern_seed() ^ Mix64(index * 2 + 1 + 0x5eed));
  const double u1 = (static_cast<double>(a >> 11) + 1.0) / 9007199254740993.0;  // (0, 1]
  const double u2 = static_cast<double>(b >> 11) / 9007199254740992.0;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  const double v = static_cast<double>(spec.record_bytes()) +
                   z * static_cast<double>(spec.record_stdev_bytes());
  return v < 1.0 ? 1 : static_cast<uint64_t>(std::llround(v));
}

DatasetFileLayout DatasetFileLayoutOf(const v1::PhaseSpec& spec, uint64_t index) {
  DatasetFileLayout l;
  l.samples = spec.samples_per_file();
  const uint64_t record = DatasetRecordBytes(spec, index);
  if (spec.dataset_format() != v1::DATASET_FORMAT_NPZ) {
    l.sample_bytes = record;
    l.data_bytes = record * l.samples;
    l.file_bytes = l.data_bytes;
    return l;
  }
  l.dim = static_cast<uint32_t>(std::max<uint64_t>(FloorSqrt(record), 1));
  l.sample_bytes = uint64_t{l.dim} * l.dim;
  l.data_bytes = l.sample_bytes * l.samples;
  const std::string xh = XHeader(l);
  l.data_offset = LocalHeader("x.npy", 0, 0).size() + xh.size();
  const TailParts t = BuildTail(l, 0, /*with_crc=*/false);
  l.file_bytes = l.data_offset + l.data_bytes + t.y_local.size() + 8 * l.samples + t.directory.size();
  return l;
}

uint64_t DatasetBytes(const v1::PhaseSpec& spec) {
  if (spec.record_stdev_bytes() == 0) {
    return DatasetFileLayoutOf(spec, 0).file_bytes * spec.num_files();
  }
  uint64_t sum = 0;
  for (uint64_t i = 0; i < spec.num_files(); ++i) sum += DatasetFileLayoutOf(spec, i).file_bytes;
  return sum;
}

absl::Status CheckDatasetSpec(const v1::PhaseSpec& s) {
  if (s.dataset_format() != v1::DATASET_FORMAT_NPZ &&
      s.dataset_format() != v1::DATASET_FORMAT_RECORDS) {
    return SpecError(s, absl::StrFormat("dataset format %d is not npz or records",
                                        static_cast<int>(s.dataset_format())));
  }
  if (s.num_files() == 0 || s.num_files() > kMaxDatasetFiles) {
    return SpecError(s, absl::StrFormat("num_files %u is not in 1..%u", s.num_files(),
                                        kMaxDatasetFiles));
  }
  if (s.samples_per_file() == 0) return SpecError(s, "samples_per_file is 0");
  if (s.record_bytes() == 0) return SpecError(s, "record size is 0");
  // The largest file must have a size a file can have: a record is at most
  // record + 9 stdev (DatasetRecordBytes: Box-Muller's |z| < 8.6), with
  // room for npz's headers and its 8 bytes a sample. Before, the product
  // wrapped: a "2-byte" file was written and the train phase read short.
  const uint64_t widest =
      SaturatingAdd(s.record_bytes(), SaturatingMul(9, s.record_stdev_bytes()));
  if (SaturatingMul(SaturatingAdd(widest, 8), s.samples_per_file()) > kMaxFileOffsetBytes / 2) {
    return SpecError(s, absl::StrFormat("records of up to %u bytes x %u samples a file do not fit "
                                        "in a file (at most %u bytes)",
                                        widest, s.samples_per_file(), kMaxFileOffsetBytes / 2));
  }
  if (s.file_prefix().find('/') != std::string::npos) {
    return SpecError(s, absl::StrFormat("file prefix \"%s\" contains '/'", s.file_prefix()));
  }
  if (s.transfer_bytes() > kMaxAiChunkBytes) {
    return SpecError(s, absl::StrFormat("transfer size %u is above the limit of %u",
                                        s.transfer_bytes(), kMaxAiChunkBytes));
  }
  return absl::OkStatus();
}

std::string NpzHead(const DatasetFileLayout& l, uint32_t x_crc32) {
  return LocalHeader("x.npy", XHeader(l).size() + l.data_bytes, x_crc32) + XHeader(l);
}

uint32_t NpzDataCrcSeed(const DatasetFileLayout& l) {
  const std::string xh = XHeader(l);
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(xh.data()), static_cast<uInt>(xh.size())));
}

std::string NpzTail(const DatasetFileLayout& l, uint32_t x_crc32) {
  TailParts t = BuildTail(l, x_crc32, /*with_crc=*/true);
  return t.y_local + std::string(8 * l.samples, '\0') + t.directory;
}

std::vector<uint64_t> EpochFileOrder(const v1::PhaseSpec& spec, uint32_t epoch) {
  std::vector<uint64_t> order(spec.num_files());
  std::iota(order.begin(), order.end(), uint64_t{0});
  if (spec.file_shuffle() != v1::SHUFFLE_OFF) {
    std::mt19937_64 rng(spec.shuffle_seed() + epoch);  // DLIO: np.random.seed(seed + epoch)
    std::shuffle(order.begin(), order.end(), rng);
  }
  return order;
}

std::vector<uint64_t> EpochRankSamples(const v1::PhaseSpec& spec, uint32_t rank, uint32_t epoch) {
  const uint64_t total = spec.num_files() * spec.samples_per_file();
  const uint64_t ranks = std::max<uint32_t>(spec.total_tasks(), 1);
  const uint64_t per = (total + ranks - 1) / ranks;
  const uint64_t begin = std::min(total, per * rank);
  const uint64_t end = std::min(total, begin + per);
  std::vector<uint64_t> samples(end - begin);
  std::iota(samples.begin(), samples.end(), begin);
  if (spec.sample_shuffle() != v1::SHUFFLE_OFF) {
    std::mt19937_64 rng(spec.shuffle_seed() + epoch);
    std::shuffle(samples.begin(), samples.end(), rng);
  }
  return samples;
}

uint64_t StepsPerEpoch(const v1::PhaseSpec& spec) {
  const uint64_t total = spec.num_files() * spec.samples_per_file();
  const uint64_t per_step = uint64_t{std::max<uint32_t>(spec.batch_size(), 1)} *
                            std::max<uint32_t>(spec.total_tasks(), 1);
  uint64_t steps = total / per_step;
  if (spec.total_training_steps() > 0) steps = std::min(steps, spec.total_training_steps());
  return steps;
}

}  // namespace lockstep
