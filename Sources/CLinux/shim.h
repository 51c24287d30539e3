#ifndef PARLEY_CLINUX_SHIM_H
#define PARLEY_CLINUX_SHIM_H
// Linux calls the Glibc module does not expose: epoll, eventfd, and the _GNU_SOURCE
// socket calls (accept4, recvmmsg, sendmmsg, struct mmsghdr). The Glibc module is
// built without _GNU_SOURCE, so the _GNU_SOURCE-only declarations are repeated here
// with the exact glibc signatures.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <pthread.h>

struct parley_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

extern int accept4(int fd, struct sockaddr *addr, socklen_t *addr_len, int flags);
// Declared under our own names, bound to the glibc symbols, so they never clash with
// a declaration that a _GNU_SOURCE build of sys/socket.h might also provide.
extern int parley_recvmmsg(int fd, struct parley_mmsghdr *vmessages, unsigned int vlen, int flags, struct timespec *tmo) __asm__("recvmmsg");
extern int parley_sendmmsg(int fd, struct parley_mmsghdr *vmessages, unsigned int vlen, int flags) __asm__("sendmmsg");
extern int parley_accept4(int fd, struct sockaddr *addr, socklen_t *addr_len, int flags) __asm__("accept4");
// Names a thread (max 15 bytes + NUL) so event loops show up in top -H, gdb and perf.
extern int parley_pthread_setname_np(pthread_t thread, const char *name) __asm__("pthread_setname_np");

#ifndef SOCK_NONBLOCK
#define SOCK_NONBLOCK 04000
#endif
#ifndef SOCK_CLOEXEC
#define SOCK_CLOEXEC 02000000
#endif
#ifndef MSG_WAITFORONE
#define MSG_WAITFORONE 0x10000
#endif
#endif
