/* The floor server (issue 84): the least a keep-alive HTTP/1.1 server can do per request on
 * Linux, frozen, to measure muxlab's designs against. One thread, level-triggered epoll, a
 * read of what arrived, a count of the request heads in it ("\r\n\r\n", across reads too), and
 * one write of as many fixed responses (muxlab's, byte for byte). No parsing, no timers, no
 * limits: not a server to run, a baseline. It counts its system calls and epoll_wait returns
 * and prints them, with the requests it answered, on SIGTERM / SIGINT:
 *   {"event":"stats","requests":N,"syscalls":N,"wakeups":N}
 * Build: scripts/floor/build.sh (cc -O2). Run: target/floor PORT [ADDR] (ADDR: an IPv4 address
 * to listen on, 127.0.0.1 by default; prints a listening line). */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char RESPONSE[] = "HTTP/1.1 200 OK\r\nServer: muxlab\r\nContent-Type: text/html\r\n"
                               "Content-Length: 18\r\nConnection: keep-alive\r\n\r\n<html>hello</html>";
#define RESPONSE_LEN (sizeof(RESPONSE) - 1)
#define MAX_FD 65536
#define MAX_BATCH 64

static volatile sig_atomic_t stop;
static unsigned long long requests, syscalls, wakeups;
/* Per connection: how much of "\r\n\r\n" the bytes so far end with. */
static unsigned char matched[MAX_FD];

static void on_stop(int sig) { (void)sig; stop = 1; }

/* Counts the request heads that end in buf, carrying a partial "\r\n\r\n" across reads. */
static unsigned count_heads(int fd, const char *buf, ssize_t n) {
    static const char END[] = "\r\n\r\n";
    unsigned heads = 0, m = matched[fd];
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == END[m]) {
            if (++m == 4) { heads++; m = 0; }
        } else {
            m = (buf[i] == '\r') ? 1 : 0;
        }
    }
    matched[fd] = (unsigned char)m;
    return heads;
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 0;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {0};
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, argc > 2 ? argv[2] : "127.0.0.1", &a.sin_addr) != 1) {
        fprintf(stderr, "floor: not an IPv4 address: %s\n", argv[2]);
        return 2;
    }
    if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1024)) { perror("floor: listen"); return 1; }
    socklen_t alen = sizeof a;
    getsockname(l, (struct sockaddr *)&a, &alen);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
    printf("{\"event\":\"listening\",\"addr\":\"%s:%d\"}\n", ip, ntohs(a.sin_port));
    fflush(stdout);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = l};
    epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
    static char in[65536], out[MAX_BATCH * RESPONSE_LEN];
    for (int i = 0; i < MAX_BATCH; i++) memcpy(out + i * RESPONSE_LEN, RESPONSE, RESPONSE_LEN);
    struct epoll_event events[256];
    while (!stop) {
        int n = epoll_wait(ep, events, 256, -1);
        syscalls++;
        if (n < 0) continue;
        wakeups++;
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == l) {
                int c = accept4(l, NULL, NULL, SOCK_NONBLOCK);
                syscalls++;
                if (c < 0 || c >= MAX_FD) { if (c >= 0) close(c); continue; }
                setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
                epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
                syscalls += 2;
                matched[c] = 0;
                continue;
            }
            ssize_t r = read(fd, in, sizeof in);
            syscalls++;
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN) continue;
                close(fd);
                syscalls++;
                continue;
            }
            unsigned heads = count_heads(fd, in, r);
            requests += heads;
            while (heads > 0) {
                unsigned k = heads < MAX_BATCH ? heads : MAX_BATCH;
                /* Small responses on a loopback socket: the write takes them whole. */
                ssize_t w = write(fd, out, k * RESPONSE_LEN);
                syscalls++;
                if (w < 0) break;
                heads -= k;
            }
        }
    }
    printf("{\"event\":\"stats\",\"requests\":%llu,\"syscalls\":%llu,\"wakeups\":%llu}\n", requests, syscalls, wakeups);
    return 0;
}
