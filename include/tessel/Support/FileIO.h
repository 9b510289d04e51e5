//===- FileIO.h - Bounded reads and safe writes of whole files --*- C++ -*-===//
//
// Every file tessel reads or writes goes through these functions, so that
// the tools treat files alike:
//
//   - `-` is standard input (reading) or standard output (writing).
//   - A read is bounded: a regular file larger than the limit is refused
//     before any byte is read, and a device or a pipe (/dev/zero, a FIFO)
//     is read at most one byte past the limit.
//   - A regular output file is replaced atomically: the bytes go to a
//     temporary file in the same directory, which is then renamed over the
//     target, so a failure never leaves a half-written file. Its mode and
//     owner are kept. A symbolic link is followed (the file it points to is
//     replaced, the link stays). A regular file with several hard links
//     keeps them: the bytes are staged in full first (so a full disk fails
//     before the target is touched), then copied over the target in place;
//     only that copy is not atomic. A device, FIFO or socket is written in
//     place (`--output /dev/null` discards the output and leaves /dev/null
//     alone). A directory is refused.
//   - Several outputs are written all or none (`writeFiles`): every regular
//     output is staged before the first one is renamed into place.
//
//   writeFiles({{"a.npy", bytesA}, {"nodir/b.npy", bytesB}})
//     -> "cannot write nodir/b.npy: no such file or directory"; a.npy is
//        untouched
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_FILEIO_H
#define TESSEL_SUPPORT_FILEIO_H

#include "tessel/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessel {

/// The default bound of `readFileBytes`: 1 GiB.
constexpr int64_t kMaxInputBytes = int64_t(1) << 30;

/// Reads all of `path` ("-": standard input). Refuses more than `maxBytes`
/// bytes: "PATH has 100 bytes, WHY" for a regular file (before reading it),
/// "PATH holds more than MAX bytes, WHY" for a device or pipe, where `why`
/// says where the bound comes from ("f32[3,5] needs 60 (15 elements of 4
/// bytes)").
Expected<std::string> readFileBytes(const std::string &path,
                                    int64_t maxBytes = kMaxInputBytes,
                                    const std::string &why = "");

/// Writes `contents` to `path` as the file comment describes. A failure
/// says why ("cannot write PATH: ...").
Status writeFile(const std::string &path, std::string_view contents);

/// Writes several files, all or none: a failure before the first rename
/// leaves every target as it was. Outputs to devices and to `-` are written
/// after every regular output is staged and before any is renamed.
Status
writeFiles(const std::vector<std::pair<std::string, std::string>> &files);

/// strerror's text with a lower-case first letter, as tessel's messages are.
std::string systemErrorText(int code);

} // namespace tessel

#endif // TESSEL_SUPPORT_FILEIO_H
