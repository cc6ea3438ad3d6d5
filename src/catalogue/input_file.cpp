#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/output_file.hpp>
#include <map>
#include <set>
#include <vector>

namespace k3plan {

namespace {

const char* file_type(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

InputError not_regular(const std::string& path, mode_t m, const char* what) {
  if (S_ISDIR(m)) return InputError(fmt::format("{}: is a directory, not a {}", path, what));
  return InputError(fmt::format("{}: not a regular file ({}): a {} is read only from a regular file", path, file_type(m), what));
}

std::string mib(std::size_t bytes) { return fmt::format("{:g} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0)); }

// Opens a regular file without blocking (a FIFO is refused before a byte is read); fills st.
int open_regular(const std::string& path, const char* what, struct stat& st) {
  if (path.empty()) throw InputError(fmt::format("{}: empty file name", what));
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) throw InputError(fmt::format("{}: no such file", path));
    throw InputError(fmt::format("{}: cannot read {}: {}", path, what, std::strerror(e)));
  }
  if (!S_ISREG(st.st_mode)) throw not_regular(path, st.st_mode, what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot open {}: {}", path, what, std::strerror(errno)));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced between stat and open
    ::close(fd);
    throw not_regular(path, st.st_mode, what);
  }
  return fd;
}

// Up to n bytes from fd into out (appended); stops at the end of the file.
void read_up_to(int fd, std::string& out, std::size_t n, const std::string& path, const char* what) {
  const std::size_t start = out.size();
  out.resize(start + n);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, out.data() + start + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw InputError(fmt::format("{}: cannot read {}: {}", path, what, std::strerror(errno)));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(start + got);
}

std::string read_checked(const std::string& path, const char* what, std::size_t max_bytes) {
  struct stat st {};
  const int fd = open_regular(path, what, st);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_bytes) throw InputError(fmt::format("{}: {} bytes: larger than the {} limit for a {}", path, size, mib(max_bytes), what));
  std::string data;
  data.resize(size + 1);
  std::size_t got = 0;
  for (;;) {
    if (got == data.size()) {
      if (data.size() > max_bytes) break;
      data.resize(std::min(data.size() * 2 + 4096, max_bytes + 1));
    }
    const ssize_t r = ::read(fd, data.data() + got, data.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw InputError(fmt::format("{}: cannot read {}: {}", path, what, std::strerror(errno)));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  if (got > max_bytes) throw InputError(fmt::format("{}: larger than the {} limit for a {} (grew while read)", path, mib(max_bytes), what));
  data.resize(got);
  return data;
}

}  // namespace

int code_point_column(std::string_view line, int byte_column) {
  int cp = 1;
  for (std::size_t b = 0; b < line.size() && static_cast<int>(b) + 1 < byte_column; ++b)
    cp += (static_cast<unsigned char>(line[b]) & 0xC0) != 0x80;  // continuation bytes take no column
  return byte_column > static_cast<int>(line.size()) + 1 ? cp + (byte_column - static_cast<int>(line.size()) - 1) : cp;
}

TextPos text_pos(std::string_view text, std::size_t offset) {
  TextPos p;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

void check_text(std::string_view text, const std::string& origin, const char* what) {
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto p = text_pos(text, nul);
    throw InputError(fmt::format("{}:{}:{}: binary data (NUL byte at byte offset {}), not a {}", origin, p.line, p.column, nul, what));
  }
  std::size_t bad = 0;
  if (!valid_utf8(text, &bad)) {
    const auto p = text_pos(text, bad);
    throw InputError(fmt::format("{}:{}:{}: invalid UTF-8 (byte 0x{:02x} at byte offset {}) in a {}", origin, p.line, p.column,
                                 static_cast<unsigned char>(text[bad]), bad, what));
  }
}

InputFileHead::InputFileHead(const std::string& path, const char* what) : path_(path), what_(what) {
  struct stat st {};
  fd_ = open_regular(path, what, st);
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFileHead::~InputFileHead() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFileHead::read(std::size_t n) {
  std::string out;
  // in steps, so a length field that promises more than the file holds allocates only what is there
  for (std::size_t step = std::min<std::size_t>(n, 1u << 20); out.size() < n; step = std::min(n - out.size(), step * 2)) {
    const std::size_t before = out.size();
    read_up_to(fd_, out, step, path_, what_);
    if (out.size() - before < step) break;
  }
  return out;
}

std::string read_input_bytes(const std::string& path, const char* what, std::size_t max_bytes) {
  return read_checked(path, what, max_bytes);
}

std::string read_input_file(const std::string& path, const char* what, std::size_t max_bytes) {
  std::string text = read_checked(path, what, max_bytes);
  check_text(text, path, what);
  return text;
}

namespace {

// The byte offset of the n-th (0-based) occurrence of "key" used as an object key, or npos.
std::size_t find_key(const std::string& text, const std::string& key, int n) {
  const std::string quoted = nlohmann::json(key).dump();
  std::size_t pos = 0;
  for (;;) {
    pos = text.find(quoted, pos);
    if (pos == std::string::npos) return pos;
    std::size_t k = pos + quoted.size();
    while (k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n')) ++k;
    if (k < text.size() && text[k] == ':' && n-- == 0) return pos;
    pos += quoted.size();
  }
}

}  // namespace

nlohmann::json parse_json_input(const std::string& text, const std::string& origin, int max_depth) {
  check_text(text, origin, "JSON file");
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;  // the key being read (objects)
  };
  std::vector<Frame> stack;
  std::map<std::string, int> seen_count;  // key name -> occurrences so far (locates a duplicate in the text)
  const auto field = [&](const std::string& last) {
    std::string f;
    for (const auto& fr : stack) {
      if (fr.object && !fr.key.empty() && &fr != &stack.back()) f += (f.empty() ? "" : ".") + fr.key;
      if (!fr.object) f += "[]";
    }
    return f + (f.empty() || last.empty() ? "" : ".") + last;
  };
  const auto located = [&](const std::string& key, int occurrence) {
    const auto off = find_key(text, key, occurrence);
    if (off == std::string::npos) return origin;
    const auto p = text_pos(text, off);
    return fmt::format("{}:{}:{}", origin, p.line, p.column);
  };
  using E = nlohmann::json::parse_event_t;
  const nlohmann::json::parser_callback_t cb = [&](int depth, E event, nlohmann::json& parsed) -> bool {
    switch (event) {
      case E::object_start:
      case E::array_start:
        if (depth >= max_depth) throw InputError(fmt::format("{}: nesting deeper than {} levels in a JSON file", origin, max_depth));
        stack.push_back(Frame{event == E::object_start, {}, {}});
        break;
      case E::object_end:
      case E::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case E::key: {
        const std::string k = parsed.get<std::string>();
        const int n = seen_count[k]++;
        if (!stack.empty()) {
          Frame& top = stack.back();
          top.key = k;
          if (!top.keys.insert(k).second) throw InputError(fmt::format("{}: field '{}': duplicate key", located(k, n), field(k)));
        }
        break;
      }
      case E::value:
        if (parsed.is_number_float() && !std::isfinite(parsed.get<double>())) {
          const std::string k = !stack.empty() && stack.back().object ? stack.back().key : "";
          throw InputError(fmt::format("{}: field '{}': number out of range (not a finite double)",
                                       k.empty() ? origin : located(k, seen_count[k] - 1), field(k)));
        }
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, cb);
  } catch (const nlohmann::json::out_of_range& e) {  // 406: a number literal beyond double (1e400)
    std::string msg = e.what();
    const auto q1 = msg.find('\''), q2 = msg.rfind('\'');
    const std::string literal = q1 != std::string::npos && q2 > q1 ? msg.substr(q1 + 1, q2 - q1 - 1) : "";
    const auto off = literal.empty() ? std::string::npos : text.find(literal);
    if (off == std::string::npos) throw InputError(fmt::format("{}: number out of range (not a finite double)", origin));
    // the key the literal is the value of: the last "key" before it, followed by ':'
    std::string key;
    if (const auto colon = text.rfind(':', off); colon != std::string::npos) {
      const auto qe = text.rfind('"', colon);
      const auto qs = qe == std::string::npos || qe == 0 ? std::string::npos : text.rfind('"', qe - 1);
      if (qs != std::string::npos) key = text.substr(qs + 1, qe - qs - 1);
    }
    const auto p = text_pos(text, off);
    throw InputError(fmt::format("{}:{}:{}: field '{}': {} is out of range (not a finite double)", origin, p.line, p.column, key, literal));
  } catch (const nlohmann::json::parse_error& e) {
    const auto p = text_pos(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string msg = e.what();
    if (const auto at = msg.find("; last read"); at != std::string::npos) msg = msg.substr(0, at);
    if (const auto at = msg.find("] "); at != std::string::npos) msg = msg.substr(at + 2);
    throw InputError(fmt::format("{}:{}:{}: malformed JSON: {}", origin, p.line, p.column, msg));
  }
}

namespace {
const char* type_name(JsonType t) {
  switch (t) {
    case JsonType::string:
      return "a string";
    case JsonType::number:
      return "a number";
    case JsonType::integer:
      return "a whole number";
    case JsonType::boolean:
      return "true or false";
    case JsonType::object:
      return "an object";
    case JsonType::array:
      return "an array";
  }
  return "?";
}
bool is_type(const nlohmann::json& v, JsonType t) {
  switch (t) {
    case JsonType::string:
      return v.is_string();
    case JsonType::number:
      return v.is_number();
    case JsonType::integer:
      return v.is_number_integer() || (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()));
    case JsonType::boolean:
      return v.is_boolean();
    case JsonType::object:
      return v.is_object();
    case JsonType::array:
      return v.is_array();
  }
  return false;
}
}  // namespace

void check_json_types(const nlohmann::json& obj, std::initializer_list<JsonField> fields, const std::string& origin,
                      const std::string& prefix) {
  if (!obj.is_object()) return;
  for (const auto& f : fields) {
    const auto it = obj.find(f.key);
    if (it == obj.end() || it->is_null() || is_type(*it, f.type)) continue;
    throw InputError(fmt::format("{}: field '{}{}{}': expected {}, got {}", origin, prefix, prefix.empty() ? "" : ".", f.key,
                                 type_name(f.type), it->type_name()));
  }
}

}  // namespace k3plan
