#include "controller/service/head_deadline.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstdio>

namespace lockstep {

HeadDeadline::HeadDeadline(absl::Duration limit)
    : limit_(absl::ToChronoMilliseconds(limit)), watchdog_([this] { Run(); }) {}

HeadDeadline::~HeadDeadline() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  watchdog_.join();
}

int HeadDeadline::SslIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, &OnFree);
  return index;
}

int HeadDeadline::CtxIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

void HeadDeadline::Watch(SSL_CTX* ctx) {
  SSL_CTX_set_ex_data(ctx, CtxIndex(), this);
  SSL_CTX_set_info_callback(ctx, &HeadDeadline::OnInfo);
}

void HeadDeadline::OnInfo(const SSL* ssl, int where, int /*ret*/) {
  if ((where & SSL_CB_HANDSHAKE_START) == 0 || SSL_get_ex_data(ssl, SslIndex()) != nullptr) {
    return;
  }
  auto* owner =
      static_cast<HeadDeadline*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), CtxIndex()));
  const int fd = SSL_get_fd(ssl);
  if (owner == nullptr || fd < 0) return;
  auto* c = new Connection{.owner = owner, .fd = fd,
                           .waiting_since = std::chrono::steady_clock::now()};
  // OpenSSL's ex_data setter takes the SSL as mutable; the callback is given
  // it as const, and this is the connection's own thread. Unless the record
  // is freed with the SSL it is not watched: its descriptor would outlive it.
  if (SSL_set_ex_data(const_cast<SSL*>(ssl), SslIndex(), c) != 1) {
    delete c;
    return;
  }
  absl::MutexLock lock(&owner->mu_);
  owner->connections_.insert(c);
}

// Runs in SSL_free, before httplib closes the socket.
void HeadDeadline::OnFree(void* /*parent*/, void* ptr, CRYPTO_EX_DATA* /*ad*/, int /*index*/,
                          long /*argl*/, void* /*argp*/) {
  auto* c = static_cast<Connection*>(ptr);
  if (c == nullptr) return;
  c->owner->Forget(c);
  delete c;
}

void HeadDeadline::Forget(Connection* c) {
  absl::MutexLock lock(&mu_);
  connections_.erase(c);
}

void HeadDeadline::SetWaiting(const SSL* ssl, bool waiting) {
  if (ssl == nullptr) return;
  auto* c = static_cast<Connection*>(SSL_get_ex_data(ssl, SslIndex()));
  if (c == nullptr) return;
  absl::MutexLock lock(&mu_);
  c->waiting_for_head = waiting;
  c->waiting_since = std::chrono::steady_clock::now();
}

void HeadDeadline::HeadRead(const SSL* ssl) { SetWaiting(ssl, false); }

void HeadDeadline::Answered(const SSL* ssl) { SetWaiting(ssl, true); }

int64_t HeadDeadline::cut_total() const {
  absl::MutexLock lock(&mu_);
  return cut_total_;
}

void HeadDeadline::Run() {
  const absl::Duration tick =
      std::min(absl::Milliseconds(250), absl::FromChrono(limit_) / 4);
  std::chrono::steady_clock::time_point logged;
  bool ever_logged = false;
  int64_t unlogged = 0;
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), tick)) {
    const auto now = std::chrono::steady_clock::now();
    for (Connection* c : connections_) {
      if (!c->waiting_for_head || c->cut || now - c->waiting_since < limit_) continue;
      ::shutdown(c->fd, SHUT_RDWR);
      c->cut = true;
      ++cut_total_;
      ++unlogged;
    }
    // At most a line a minute, with the count: a flood is one line.
    if (unlogged > 0 && (!ever_logged || now - logged >= std::chrono::minutes(1))) {
      std::fprintf(stderr,
                   "lockstep-service: closed %lld connection(s) that sent no complete request "
                   "head within %lld ms of their start or last answer (slow or idle clients)\n",
                   static_cast<long long>(unlogged),
                   static_cast<long long>(
                       std::chrono::duration_cast<std::chrono::milliseconds>(limit_).count()));
      unlogged = 0;
      logged = now;
      ever_logged = true;
    }
  }
}

}  // namespace lockstep
