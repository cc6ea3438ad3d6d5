#pragma once
// A local stand-in for the Hugging Face Hub, for the tests (they never reach the internet): an
// HTTP/1.1 server on 127.0.0.1 (ephemeral port) serving a directory laid out as <org>/<name>/<file>
// under the Hub's URL layout:
//   GET /api/models/{org}/{name}/revision/{rev}  -> {"id", "sha", "siblings": [{"rfilename"}]}
//   GET /{org}/{name}/resolve/{rev}/{file}       -> the file; "Range: bytes=a-b" -> 206 + Content-Range
// Optional: a bearer token every request must carry (401 without it, 403 with a wrong one).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace k3plan_test {

class HubServer {
 public:
  // silent: accept connections and never answer (for timeouts)
  explicit HubServer(std::filesystem::path root, std::string token = "", bool silent = false)
      : root_(std::move(root)), token_(std::move(token)), silent_(silent) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0)
      throw std::runtime_error("HubServer: cannot listen on 127.0.0.1");
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~HubServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (thread_.joinable()) thread_.join();
    for (int c : held_) ::close(c);
  }
  HubServer(const HubServer&) = delete;
  HubServer& operator=(const HubServer&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }
  std::vector<std::string> log() const {
    std::lock_guard<std::mutex> g(mu_);
    return log_;
  }
  static constexpr const char* kSha = "0123456789abcdef0123456789abcdef01234567";

 private:
  void loop() {
    while (!stop_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) {
        if (stop_) return;
        continue;
      }
      if (silent_) {
        held_.push_back(c);
        continue;
      }
      serve(c);
      ::close(c);
    }
  }

  static void send_all(int c, const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::send(c, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }

  static void reply(int c, int status, const std::string& body, const std::string& extra = "") {
    const char* text = status == 200   ? "OK"
                       : status == 206 ? "Partial Content"
                       : status == 401 ? "Unauthorized"
                       : status == 403 ? "Forbidden"
                       : status == 416 ? "Range Not Satisfiable"
                                       : "Not Found";
    std::ostringstream h;
    h << "HTTP/1.1 " << status << " " << text << "\r\nContent-Length: " << body.size() << "\r\nConnection: close\r\n" << extra << "\r\n";
    send_all(c, h.str() + body);
  }

  void serve(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos && req.size() < 65536) {
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      req.append(buf, static_cast<std::size_t>(n));
    }
    ++requests_;
    std::istringstream in(req);
    std::string method, target, version, line, range, auth;
    in >> method >> target >> version;
    std::getline(in, line);
    while (std::getline(in, line) && line != "\r") {
      std::string lower = line;
      for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (lower.rfind("range:", 0) == 0) range = line.substr(6);
      if (lower.rfind("authorization:", 0) == 0) auth = line.substr(14);
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      log_.push_back(target + (range.empty() ? "" : " range" + range));
    }
    while (!auth.empty() && auth.front() == ' ') auth.erase(0, 1);
    while (!range.empty() && range.front() == ' ') range.erase(0, 1);
    if (!token_.empty()) {
      if (auth.empty()) return reply(c, 401, "{\"error\": \"Access to this model is restricted\"}");
      if (auth != "Bearer " + token_) return reply(c, 403, "{\"error\": \"forbidden\"}");
    }
    std::vector<std::string> parts;
    std::stringstream ss(target);
    for (std::string p; std::getline(ss, p, '/');)
      if (!p.empty()) parts.push_back(p);
    for (const auto& p : parts)
      if (p == "..") return reply(c, 404, "");
    namespace fs = std::filesystem;
    if (parts.size() == 6 && parts[0] == "api" && parts[1] == "models" && parts[4] == "revision") {
      const fs::path repo = root_ / parts[2] / parts[3];
      if (!fs::is_directory(repo)) return reply(c, 404, "{\"error\": \"Repository not found\"}");
      nlohmann::json j = {{"id", parts[2] + "/" + parts[3]}, {"sha", kSha}, {"siblings", nlohmann::json::array()}};
      for (const auto& e : fs::directory_iterator(repo)) j["siblings"].push_back({{"rfilename", e.path().filename().string()}});
      return reply(c, 200, j.dump(), "Content-Type: application/json\r\n");
    }
    if (parts.size() >= 5 && parts[2] == "resolve") {
      fs::path file = root_ / parts[0] / parts[1];
      for (std::size_t i = 4; i < parts.size(); ++i) file /= parts[i];
      if (!fs::is_regular_file(file)) return reply(c, 404, "Entry not found");
      const std::uint64_t size = fs::file_size(file);
      std::ifstream f(file, std::ios::binary);
      if (!range.empty()) {
        unsigned long long a = 0, b = 0;
        if (std::sscanf(range.c_str(), "bytes=%llu-%llu", &a, &b) != 2 || a > b || a >= size) return reply(c, 416, "");
        if (b >= size) b = size - 1;
        std::string body(static_cast<std::size_t>(b - a + 1), '\0');
        f.seekg(static_cast<std::streamoff>(a));
        f.read(body.data(), static_cast<std::streamsize>(body.size()));
        return reply(c, 206, body,
                     "Content-Range: bytes " + std::to_string(a) + "-" + std::to_string(b) + "/" + std::to_string(size) + "\r\n");
      }
      if (size > 64u << 20) return reply(c, 416, "");  // the tests never download tensor data
      std::ostringstream body;
      body << f.rdbuf();
      return reply(c, 200, body.str());
    }
    reply(c, 404, "");
  }

  std::filesystem::path root_;
  std::string token_;
  bool silent_ = false;
  std::vector<int> held_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  mutable std::mutex mu_;
  std::vector<std::string> log_;
  std::thread thread_;
};

}  // namespace k3plan_test
