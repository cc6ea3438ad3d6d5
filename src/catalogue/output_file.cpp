#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <k3plan/error.hpp>
#include <k3plan/output_file.hpp>
#include <nlohmann/json.hpp>

namespace k3plan {

namespace fs = std::filesystem;

std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t* code_point) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) {
    if (code_point) *code_point = c;
    return 1;
  }
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (RFC 3629 table 3-7)
  std::uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0Fu;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07u;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3Fu);
  }
  if (code_point) *code_point = cp;
  return n;
}

std::string sanitize_text(std::string_view s, bool keep_layout, bool keep_controls) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      o += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    const bool control = (c < 0x20 || c == 0x7F) && !(keep_layout && (c == '\n' || c == '\t'));
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;  // U+0080..U+009F (CSI and friends)
    if ((control || c1) && !keep_controls) {
      o += c1 ? fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1])) : fmt::format("\\x{:02x}", c);
    } else {
      o.append(s.substr(i, n));
    }
    i += n;
  }
  return o;
}

void sanitize_json(nlohmann::json& j) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (!valid_utf8(s)) j = sanitize_text(s, true, true);
  } else if (j.is_array()) {
    for (auto& v : j) sanitize_json(v);
  } else if (j.is_object()) {
    bool bad_key = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      bad_key = bad_key || !valid_utf8(it.key());
      sanitize_json(it.value());
    }
    if (bad_key) {
      nlohmann::json fixed = nlohmann::json::object();
      for (auto it = j.begin(); it != j.end(); ++it) fixed[sanitize_text(it.key(), true, true)] = it.value();
      j = std::move(fixed);
    }
  }
}

namespace {

std::string errno_text(int e) { return std::strerror(e); }

struct Staged {
  std::string tmp, path;
};

void remove_all_tmp(const std::vector<Staged>& staged) {
  for (const auto& s : staged) ::unlink(s.tmp.c_str());
}

Staged stage(const OutputFile& f) {
  if (f.path.empty()) throw InputError("output file: empty path");
  const fs::path target(f.path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  struct stat st {};
  if (::lstat(f.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(fmt::format("{}: is a directory", f.path));
  static std::atomic<unsigned> counter{0};
  const auto stamp = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path tmp = dir / fmt::format(".{}.{}-{}-{:x}.tmp", target.filename().string(), ::getpid(), counter.fetch_add(1),
                                           stamp + static_cast<unsigned>(attempt));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f.executable ? 0777 : 0666);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      throw InputError(fmt::format("{}: cannot create a temporary file in {}: {}", f.path, dir.string(), errno_text(errno)));
    }
    const Staged s{tmp.string(), f.path};
    std::size_t done = 0;
    while (done < f.content.size()) {
      const ssize_t w = ::write(fd, f.content.data() + done, f.content.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        const int e = w < 0 ? errno : ENOSPC;
        ::close(fd);
        ::unlink(s.tmp.c_str());
        throw InputError(fmt::format("{}: write failed: {}", f.path, errno_text(e)));
      }
      done += static_cast<std::size_t>(w);
    }
    if (::fsync(fd) != 0 && errno != EINVAL) {  // EINVAL: a file system without fsync (some pseudo file systems)
      const int e = errno;
      ::close(fd);
      ::unlink(s.tmp.c_str());
      throw InputError(fmt::format("{}: write failed: {}", f.path, errno_text(e)));
    }
    if (::close(fd) != 0) {
      const int e = errno;
      ::unlink(s.tmp.c_str());
      throw InputError(fmt::format("{}: write failed: {}", f.path, errno_text(e)));
    }
    return s;
  }
  throw InputError(fmt::format("{}: cannot create a unique temporary file in {}", f.path, dir.string()));
}

}  // namespace

bool valid_utf8(std::string_view s, std::size_t* bad_offset) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += n;
  }
  return true;
}

std::string escape_for_terminal(std::string_view s) { return sanitize_text(s, false, false); }

void write_files_atomic(const std::vector<OutputFile>& files) {
  std::vector<Staged> staged;
  try {
    for (const auto& f : files) staged.push_back(stage(f));
  } catch (...) {
    remove_all_tmp(staged);
    throw;
  }
  for (std::size_t i = 0; i < staged.size(); ++i) {
    if (::rename(staged[i].tmp.c_str(), staged[i].path.c_str()) != 0) {
      const int e = errno;
      remove_all_tmp({staged.begin() + static_cast<std::ptrdiff_t>(i), staged.end()});
      throw InputError(fmt::format("{}: cannot replace: {}", staged[i].path, errno_text(e)));
    }
  }
}

void write_file_atomic(const std::string& path, std::string_view content, bool executable) {
  write_files_atomic({OutputFile{path, std::string(content), executable}});
}

void write_stdout(std::string_view text) {
  if (text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
    throw InputError(fmt::format("standard output: write error: {}", errno_text(errno)));
}

int finish_stdout(int code) noexcept {
  const bool c_ok = std::fflush(stdout) == 0 && !std::ferror(stdout);
  const int e = errno;
  std::cout.flush();
  if (!c_ok || std::cout.fail()) {
    print_error_line(fmt::format("standard output: write error: {}", errno_text(c_ok ? EIO : e)));
    return 2;
  }
  return code;
}

void print_error_line(std::string_view msg) noexcept {
  try {
    const std::string line = "k3plan: error: " + escape_for_terminal(msg) + "\n";
    (void)std::fwrite(line.data(), 1, line.size(), stderr);  // nothing left to report a failure to
    (void)std::fflush(stderr);
  } catch (...) {
    (void)std::fputs("k3plan: error\n", stderr);
  }
}

}  // namespace k3plan
