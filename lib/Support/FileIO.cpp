//===- FileIO.cpp - Bounded reads and safe writes of whole files ----------===//
#include "tessel/Support/FileIO.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tessel {

std::string systemErrorText(int code) {
  std::string text = std::strerror(code);
  if (!text.empty())
    text[0] =
        static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

namespace {

std::string displayName(const std::string &path, bool output) {
  if (path == "-")
    return output ? "standard output" : "standard input";
  return path;
}

Error cannot(const char *verb, const std::string &path, int code) {
  return Error(std::string("cannot ") + verb + " " + path + ": " +
               systemErrorText(code));
}

/// Writes all of `bytes` to `fd`; returns 0 or errno.
int writeAll(int fd, std::string_view bytes) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Follows symbolic links from `path`. Sets `target` to the file they lead
/// to, and `exists`/`info` to what is there.
Status resolve(const std::string &path, std::string &target, bool &exists,
               struct stat &info) {
  target = path;
  for (int hops = 0; hops < 40; ++hops) {
    if (::lstat(target.c_str(), &info) != 0) {
      if (errno != ENOENT)
        return cannot("write", path, errno);
      exists = false;
      return {};
    }
    if (!S_ISLNK(info.st_mode)) {
      exists = true;
      return {};
    }
    std::string link(4096, '\0');
    ssize_t n = ::readlink(target.c_str(), link.data(), link.size());
    if (n < 0)
      return cannot("write", path, errno);
    link.resize(static_cast<size_t>(n));
    target = !link.empty() && link[0] == '/' ? link
                                             : directoryOf(target) + "/" + link;
  }
  return cannot("write", path, ELOOP);
}

/// One output on its way: staged in a temporary file, or written in place.
struct Staged {
  std::string path;
  std::string target;
  std::string temporary;
  bool inPlace = false;
  /// A regular file with other hard links: the staged copy proves the
  /// bytes can be written, then they are copied over the target, which
  /// keeps its inode (and so every link) instead of being renamed over.
  bool keepLinks = false;
  std::string_view contents;
};

void discard(std::vector<Staged> &staged) {
  for (Staged &s : staged)
    if (!s.temporary.empty())
      ::unlink(s.temporary.c_str());
  staged.clear();
}

/// Stages a regular (or new) output in a temporary file beside its target.
Status stage(Staged &s, bool exists, const struct stat &info) {
  std::string pattern =
      directoryOf(s.target) + "/." + baseOf(s.target) + ".tessel-XXXXXX";
  int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    int code = errno;
    // A writable file in a directory we may not write: write it in place.
    if (exists && (code == EACCES || code == EPERM) &&
        ::access(s.target.c_str(), W_OK) == 0) {
      s.inPlace = true;
      return {};
    }
    return cannot("write", s.path, code);
  }
  s.temporary = pattern;
  mode_t mode;
  if (exists) {
    mode = info.st_mode & 07777;
    if (info.st_uid != ::geteuid() || info.st_gid != ::getegid())
      (void)!::fchown(fd, info.st_uid, info.st_gid);
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  int code = ::fchmod(fd, mode) != 0 ? errno : 0;
  if (!code)
    code = writeAll(fd, s.contents);
  if (::close(fd) != 0 && !code)
    code = errno;
  if (code)
    return cannot("write", s.path, code);
  return {};
}

Status writeInPlace(const Staged &s) {
  if (s.path == "-") {
    std::fflush(stdout);
    if (int code = writeAll(STDOUT_FILENO, s.contents))
      return cannot("write", displayName(s.path, true), code);
    return {};
  }
  // O_TRUNC empties a regular file written in place; devices and FIFOs
  // ignore it.
  int fd = ::open(s.target.c_str(), O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return cannot("write", s.path, errno);
  int code = writeAll(fd, s.contents);
  if (::close(fd) != 0 && !code)
    code = errno;
  if (code)
    return cannot("write", s.path, code);
  return {};
}

} // namespace

Expected<std::string> readFileBytes(const std::string &path, int64_t maxBytes,
                                    const std::string &why) {
  std::string name = displayName(path, false);
  int fd =
      path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return cannot("open", name, errno);
  auto finish = [&] {
    if (fd != STDIN_FILENO)
      ::close(fd);
  };
  std::string because = why.empty() ? "the most tessel reads" : why;
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int code = errno;
    finish();
    return cannot("read", name, code);
  }
  if (S_ISDIR(info.st_mode)) {
    finish();
    return Error("cannot read " + name + ": it is a directory");
  }
  if (S_ISREG(info.st_mode) && info.st_size > maxBytes) {
    finish();
    return Error(name + " has " + std::to_string(info.st_size) + " bytes, " +
                 (why.empty() ? "more than the " + std::to_string(maxBytes) +
                                    " bytes tessel reads"
                              : why));
  }
  std::string bytes;
  if (S_ISREG(info.st_mode))
    bytes.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int code = errno;
      finish();
      return cannot("read", name, code);
    }
    bytes.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(bytes.size()) > maxBytes) {
      finish();
      return Error(name + " holds more than " + std::to_string(maxBytes) +
                   " bytes, " + because);
    }
  }
  finish();
  return bytes;
}

namespace {

Status stageAndWrite(
    const std::vector<std::pair<std::string, std::string_view>> &files) {
  std::vector<Staged> staged;
  for (const auto &[path, contents] : files) {
    Staged s;
    s.path = path;
    s.contents = contents;
    if (path.empty()) {
      discard(staged);
      return Error("cannot write a file with an empty name");
    }
    if (path == "-") {
      s.inPlace = true;
      staged.push_back(std::move(s));
      continue;
    }
    bool exists = false;
    struct stat info;
    if (Status error = resolve(path, s.target, exists, info); !error) {
      discard(staged);
      return error;
    }
    if (exists && S_ISDIR(info.st_mode)) {
      discard(staged);
      return Error("cannot write " + path + ": it is a directory");
    }
    if (exists && !S_ISREG(info.st_mode)) {
      s.inPlace = true;
    } else if (Status error = stage(s, exists, info); !error) {
      staged.push_back(std::move(s));
      discard(staged);
      return error;
    } else {
      s.keepLinks = exists && info.st_nlink > 1 && !s.inPlace;
    }
    staged.push_back(std::move(s));
  }
  for (const Staged &s : staged)
    if (s.inPlace)
      if (Status error = writeInPlace(s); !error) {
        discard(staged);
        return error;
      }
  for (size_t i = 0; i < staged.size(); ++i) {
    Staged &s = staged[i];
    if (s.temporary.empty())
      continue;
    if (s.keepLinks) {
      Status copied = writeInPlace(s);
      ::unlink(s.temporary.c_str());
      s.temporary.clear();
      if (!copied) {
        discard(staged);
        return copied;
      }
      continue;
    }
    if (::rename(s.temporary.c_str(), s.target.c_str()) != 0) {
      int code = errno;
      discard(staged);
      return cannot("write", s.path, code);
    }
    s.temporary.clear();
  }
  return {};
}

} // namespace

Status
writeFiles(const std::vector<std::pair<std::string, std::string>> &files) {
  std::vector<std::pair<std::string, std::string_view>> views;
  for (const auto &[path, contents] : files)
    views.emplace_back(path, contents);
  return stageAndWrite(views);
}

Status writeFile(const std::string &path, std::string_view contents) {
  return stageAndWrite({{path, contents}});
}

} // namespace tessel
