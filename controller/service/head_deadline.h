// The results service's guard against slow clients, as far as cpp-httplib
// 0.11 allows one: httplib serves a connection on one thread of its pool
// until the connection ends, and its only timeout is per read, so a client
// that sends its request head a byte every few seconds holds a thread for as
// long as it likes; a pool's worth of them and nobody else is answered.
// HeadDeadline closes a connection that has not sent a complete request head
// within `limit` of its TLS handshake's start or of its last answer (the
// keep-alive wait included), however it trickles. A request whose head is in
// (a site's push reading its body, a handler waiting on PostgreSQL) is never
// cut.
//
// httplib shows a connection only once its head is read, so connections are
// learnt from OpenSSL: an info callback on the server's SSL_CTX (handshake
// start) and the SSL's ex_data, freed with the SSL before httplib closes the
// socket. The watchdog thread only shutdown(2)s a socket past its deadline,
// never closes it: the worker that owns it sees the connection end and
// closes it, and the descriptor cannot be reused meanwhile.
#ifndef LOCKSTEP_CONTROLLER_SERVICE_HEAD_DEADLINE_H_
#define LOCKSTEP_CONTROLLER_SERVICE_HEAD_DEADLINE_H_

#include <openssl/ssl.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace lockstep {

class HeadDeadline {
 public:
  explicit HeadDeadline(absl::Duration limit);
  // Stops the watchdog. REQUIRES: no SSL of a watched SSL_CTX is left (the
  // server has stopped and its workers have ended).
  ~HeadDeadline();
  HeadDeadline(const HeadDeadline&) = delete;
  HeadDeadline& operator=(const HeadDeadline&) = delete;

  // Watches every connection `ctx` will accept (sets its info callback).
  // Call before the server accepts.
  void Watch(SSL_CTX* ctx);
  // httplib's pre-routing handler: the request head of `ssl`'s connection
  // is in; no deadline until its answer is written.
  void HeadRead(const SSL* ssl);
  // httplib's logger: the answer was written; the next head's deadline
  // starts now.
  void Answered(const SSL* ssl);

  // Connections cut so far.
  int64_t cut_total() const;

 private:
  struct Connection {
    HeadDeadline* owner;
    int fd;
    std::chrono::steady_clock::time_point waiting_since;
    bool waiting_for_head = true;
    bool cut = false;
  };
  static void OnInfo(const SSL* ssl, int where, int ret);
  static void OnFree(void* parent, void* ptr, CRYPTO_EX_DATA* ad, int index, long argl,
                     void* argp);
  static int SslIndex();
  static int CtxIndex();
  void Forget(Connection* c);
  void SetWaiting(const SSL* ssl, bool waiting);
  void Run();

  const std::chrono::steady_clock::duration limit_;
  mutable absl::Mutex mu_;
  std::set<Connection*> connections_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t cut_total_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread watchdog_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_SERVICE_HEAD_DEADLINE_H_
