/*
 * msgcount - hackbench-like message passing that accounts for every message.
 *
 * Usage: msgcount [-g GROUPS] [-f FDS] [-l LOOPS] [-s SIZE] [--threads]
 *                 [--pipe] [-T TIMEOUT_S] [--inject-loss|--inject-dup|
 *                 --inject-reorder]
 *
 * Like hackbench: each group has FDS receivers, each reading one channel
 * (AF_UNIX SOCK_STREAM socketpair, or a pipe with --pipe), and FDS senders;
 * every sender writes LOOPS messages to every receiver of its group.  Workers
 * are processes (fork) or, with --threads, threads.  All of them wait on a
 * start gate so the timing covers only the message passing.
 *
 * Each message is a header (magic, group, sender, receiver, sequence number)
 * plus SIZE payload bytes derived from the header.  Receivers read exactly
 * one record at a time (looping over short reads) until every writer has
 * closed the channel, and check that each sender's sequence numbers arrive
 * as 0, 1, 2, ... LOOPS-1.  Numbers skipped (or missing at the end) count
 * as "seq_gaps", numbers at or below one already seen as "seq_backwards":
 * a loss shows as a gap with received < sent, a duplicate as a step back
 * with received > sent, a reordering as one of each with received == sent.  Records are at most PIPE_BUF bytes, so concurrent writers
 * cannot interleave inside one (guaranteed for pipes; for AF_UNIX streams a
 * record this small is always queued as one skb).  Counters live in a
 * MAP_SHARED mapping the parent sums at the end.
 *
 * The --inject-* flags make sender 0 of group 0 misbehave once towards
 * receiver 0 (skip, repeat, or swap two messages) to show detection works.
 *
 * Output: human-readable lines, then one line "RESULT {json}".
 * Exit: 0 all messages accounted for, 2 loss/duplicate/reorder/corruption
 * or timeout (a stall), 1 usage or system error (children are killed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAGIC		0x6d736763u	/* "msgc" */
#define MAX_WORKERS	100000

struct hdr {
	uint32_t magic, group, sender, receiver;
	uint64_t seq;
};

/* Per-worker counters, one cache line each, in shared memory. */
struct slot {
	unsigned long sent;		/* senders */
	unsigned long received;		/* receivers: well-formed records */
	unsigned long gaps;		/* sequence numbers skipped or missing */
	unsigned long back;		/* sequence number already passed */
	unsigned long malformed;	/* bad header or truncated record */
	unsigned long payload;		/* payload mismatches */
	int syserr;			/* errno of a failed system call */
} __attribute__((aligned(64)));

enum { INJ_NONE, INJ_LOSS, INJ_DUP, INJ_REORDER };

static int groups = 10, fds = 20, loops = 100, size = 100, use_threads, use_pipe;
static int inject = INJ_NONE;
static double timeout_s = 600;
static size_t rec;			/* bytes per record */
static int *rfd, *wfd;			/* channel g*fds+r: read and write end */
static int *writers_left;		/* --threads: senders still using wfd */
static struct slot *slots;		/* receivers first, then senders */
static int start_rd, start_wr;		/* start gate: EOF means go */
static volatile sig_atomic_t alarmed;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned char pattern(const struct hdr *h)
{
	return (unsigned char)(h->seq * 31 + h->sender * 7 + h->receiver * 13 + h->group);
}

static void wait_start(void)
{
	char c;

	while (read(start_rd, &c, 1) < 0 && errno == EINTR)
		;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= n;
	}
	return 0;
}

/* Sender @s of group @g: LOOPS messages to each receiver of the group. */
static void sender(int g, int s, struct slot *sl)
{
	char *buf = malloc(rec);
	struct hdr *h = (struct hdr *)buf;
	int seq, r, copies;
	int faulty = inject != INJ_NONE && g == 0 && s == 0;

	if (!buf) {
		sl->syserr = ENOMEM;
		return;
	}
	wait_start();
	for (seq = 0; seq < loops && !sl->syserr; seq++) {
		for (r = 0; r < fds; r++) {
			h->magic = MAGIC;
			h->group = g;
			h->sender = s;
			h->receiver = r;
			h->seq = seq;
			copies = 1;
			if (faulty && r == 0 && seq == loops / 2) {
				if (inject == INJ_LOSS)
					copies = 0;
				else if (inject == INJ_DUP)
					copies = 2;
			}
			/* reorder: send seq k+1 in place of k and k in place of k+1 */
			if (faulty && r == 0 && inject == INJ_REORDER && loops >= 2) {
				int k = loops / 2 > 0 ? loops / 2 - 1 : 0;

				if (seq == k)
					h->seq = k + 1;
				else if (seq == k + 1)
					h->seq = k;
			}
			memset(buf + sizeof(*h), pattern(h), size);
			sl->sent++;	/* an injected loss still counts as sent */
			while (copies-- > 0) {
				if (write_all(wfd[g * fds + r], buf, rec)) {
					sl->syserr = errno;
					break;
				}
			}
			if (sl->syserr)
				break;
		}
	}
	free(buf);
}

/* Receiver @r of group @g: read records until every writer closed. */
static void receiver(int g, int r, struct slot *sl)
{
	unsigned long *next = calloc(fds, sizeof(*next));
	char *buf = malloc(rec);
	struct hdr *h = (struct hdr *)buf;
	int fd = rfd[g * fds + r], desync = 0, s;
	size_t got = 0, i;
	ssize_t n;

	if (!next || !buf) {
		sl->syserr = ENOMEM;
		goto out;
	}
	wait_start();
	for (;;) {
		n = read(fd, buf + got, rec - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			sl->syserr = errno;
			goto out;
		}
		if (n == 0)
			break;			/* all writers are gone */
		got += n;
		if (got < rec)
			continue;		/* short read: finish the record */
		got = 0;
		if (desync)
			continue;		/* lost framing: just drain */
		if (h->magic != MAGIC || h->group != (uint32_t)g ||
		    h->receiver != (uint32_t)r || h->sender >= (uint32_t)fds) {
			sl->malformed++;
			desync = 1;
			continue;
		}
		for (i = sizeof(*h); i < rec; i++)
			if ((unsigned char)buf[i] != pattern(h))
				break;
		if (i < rec)
			sl->payload++;
		sl->received++;
		if (h->seq == next[h->sender]) {
			next[h->sender]++;
		} else if (h->seq > next[h->sender]) {
			sl->gaps += h->seq - next[h->sender];
			next[h->sender] = h->seq + 1;
		} else {
			sl->back++;
		}
	}
	if (got)
		sl->malformed++;		/* truncated last record */
	if (!desync)
		for (s = 0; s < fds; s++)
			if (next[s] < (unsigned long)loops)
				sl->gaps += loops - next[s];
out:
	close(fd);	/* a failed receiver must not leave senders blocked */
	free(next);
	free(buf);
}

/* --threads: worker i < groups*fds is a receiver, the rest are senders. */
static void *thread_fn(void *arg)
{
	long i = (long)arg, n = (long)groups * fds, k, g;

	if (i < n) {
		receiver(i / fds, i % fds, &slots[i]);
	} else {
		g = (i - n) / fds;
		sender(g, (i - n) % fds, &slots[i]);
		for (k = g * fds; k < (g + 1) * fds; k++)
			if (__atomic_sub_fetch(&writers_left[k], 1, __ATOMIC_ACQ_REL) == 0)
				close(wfd[k]);
	}
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	alarmed = 1;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-g GROUPS] [-f FDS] [-l LOOPS] [-s SIZE] [--threads] [--pipe]\n"
		"          [-T TIMEOUT_S] [--inject-loss | --inject-dup | --inject-reorder]\n"
		"  -g GROUPS   groups of FDS senders + FDS receivers (default 10)\n"
		"  -f FDS      senders and receivers per group (default 20)\n"
		"  -l LOOPS    messages from each sender to each receiver (default 100)\n"
		"  -s SIZE     payload bytes per message, 0..%zu (default 100)\n"
		"  --threads   threads instead of processes\n"
		"  --pipe      pipes instead of AF_UNIX socketpairs\n"
		"  -T SECONDS  give up (kill workers, exit 2) after this long (default 600)\n"
		"  --inject-*  fault injection: sender 0 of group 0 drops, duplicates or\n"
		"              swaps one message to receiver 0 (must exit 2)\n",
		prog, PIPE_BUF - sizeof(struct hdr));
	exit(1);
}

static long num(const char *s, long min, long max, const char *prog)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage(prog);
	return v;
}

static pid_t *pids;
static int npids;

static void kill_all(void)
{
	int i;

	for (i = 0; i < npids; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (i = 0; i < npids; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
}

static void die(const char *what)
{
	perror(what);
	kill_all();
	exit(1);
}

/* Fork mode: start the workers of group @g; returns in the parent only. */
static void fork_group(int g)
{
	int i, k, base = g * fds;
	pid_t pid;

	for (i = 0; i < 2 * fds; i++) {
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid > 0) {
			pids[npids++] = pid;
			continue;
		}
		/* child: keep only the start gate's read end and our channels */
		close(start_wr);
		for (k = base; k < base + fds; k++) {
			if (i >= fds || k - base != i)
				close(rfd[k]);
			if (i < fds)
				close(wfd[k]);
		}
		if (i < fds)
			receiver(g, i, &slots[base + i]);
		else
			sender(g, i - fds, &slots[(long)groups * fds + base + i - fds]);
		_exit(slots[i < fds ? base + i : (long)groups * fds + base + i - fds].syserr ? 1 : 0);
	}
	for (k = base; k < base + fds; k++) {
		close(rfd[k]);
		close(wfd[k]);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", no_argument, NULL, 't' },
		{ "pipe", no_argument, NULL, 'p' },
		{ "inject-loss", no_argument, NULL, 'L' },
		{ "inject-dup", no_argument, NULL, 'D' },
		{ "inject-reorder", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long sent = 0, received = 0, gaps = 0, back = 0, malformed = 0;
	unsigned long payload = 0, errors;
	long nworkers, i;
	int opt, syserr = 0, timed_out = 0, status, k;
	double start, elapsed;
	struct rlimit rl;
	pthread_t *tids = NULL;
	pthread_attr_t attr;
	char *end;

	while ((opt = getopt_long(argc, argv, "g:f:l:s:T:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'g': groups = num(optarg, 1, MAX_WORKERS, argv[0]); break;
		case 'f': fds = num(optarg, 1, MAX_WORKERS, argv[0]); break;
		case 'l': loops = num(optarg, 1, INT_MAX - 1, argv[0]); break;
		case 's': size = num(optarg, 0, PIPE_BUF - sizeof(struct hdr), argv[0]); break;
		case 't': use_threads = 1; break;
		case 'p': use_pipe = 1; break;
		case 'L': inject = INJ_LOSS; break;
		case 'D': inject = INJ_DUP; break;
		case 'R': inject = INJ_REORDER; break;
		case 'T':
			timeout_s = strtod(optarg, &end);
			if (end == optarg || *end || !(timeout_s > 0 && timeout_s < 1e6))
				usage(argv[0]);
			break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || (long)groups * fds * 2 > MAX_WORKERS)
		usage(argv[0]);
	rec = sizeof(struct hdr) + size;
	nworkers = (long)groups * fds * 2;

	/* Many channels in one process with --threads: use the hard fd limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);	/* a dead reader gives EPIPE, not death */
	slots = mmap(NULL, nworkers * sizeof(*slots), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	rfd = calloc(nworkers / 2, sizeof(int));
	wfd = calloc(nworkers / 2, sizeof(int));
	writers_left = calloc(nworkers / 2, sizeof(int));
	pids = calloc(nworkers, sizeof(pid_t));
	tids = calloc(nworkers, sizeof(pthread_t));
	if (slots == MAP_FAILED || !rfd || !wfd || !writers_left || !pids || !tids) {
		perror("memory");
		return 1;
	}
	{
		int p[2];

		if (pipe(p))
			die("pipe");
		start_rd = p[0];
		start_wr = p[1];
	}
	printf("msgcount: %d groups x %d senders x %d receivers, %d loops, %zu-byte"
	       " records, %s, %s%s\n", groups, fds, fds, loops, rec,
	       use_threads ? "threads" : "processes", use_pipe ? "pipes" : "sockets",
	       inject == INJ_LOSS ? ", INJECTING LOSS" : inject == INJ_DUP ?
	       ", INJECTING DUPLICATE" : inject == INJ_REORDER ? ", INJECTING REORDER" : "");
	fflush(stdout);		/* children must not inherit buffered output */

	/* Create the channels (all at once with threads, per group with fork). */
	for (k = 0; k < groups; k++) {
		for (i = (long)k * fds; i < (long)(k + 1) * fds; i++) {
			int p[2];

			if (use_pipe ? pipe(p) : socketpair(AF_UNIX, SOCK_STREAM, 0, p))
				die(use_pipe ? "pipe" : "socketpair");
			rfd[i] = p[0];
			wfd[i] = p[1];
			writers_left[i] = fds;
		}
		if (!use_threads)
			fork_group(k);
	}
	if (use_threads) {
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		for (i = 0; i < nworkers; i++) {
			errno = pthread_create(&tids[i], &attr, thread_fn, (void *)i);
			if (errno) {
				perror("pthread_create");
				exit(1);	/* ends the threads too */
			}
		}
	}

	start = now_s();
	close(start_wr);		/* go */
	if (use_threads) {
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += (time_t)timeout_s;
		dl.tv_nsec += (long)((timeout_s - (time_t)timeout_s) * 1e9);
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
		for (i = 0; i < nworkers && !timed_out; i++)
			if (pthread_timedjoin_np(tids[i], NULL, &dl))
				timed_out = 1;	/* exit() below ends the rest */
	} else {
		struct sigaction sa;
		struct itimerval it = { { 0, 0 }, { 0, 0 } };
		int left = npids;
		pid_t pid;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;	/* no SA_RESTART: waitpid sees EINTR */
		sigaction(SIGALRM, &sa, NULL);
		it.it_value.tv_sec = (time_t)timeout_s;
		it.it_value.tv_usec = (long)((timeout_s - (time_t)timeout_s) * 1e6);
		setitimer(ITIMER_REAL, &it, NULL);
		while (left > 0) {
			pid = waitpid(-1, &status, 0);
			if (pid < 0) {
				if (errno == EINTR && alarmed) {
					timed_out = 1;
					kill_all();
					break;
				}
				if (errno == EINTR)
					continue;
				die("waitpid");
			}
			for (k = 0; k < npids; k++)
				if (pids[k] == pid)
					pids[k] = 0;	/* reaped */
			left--;
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				fprintf(stderr, "msgcount: worker %d failed (status 0x%x)\n",
					pid, status);
				syserr = 1;
				kill_all();
				break;
			}
		}
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
	}
	elapsed = now_s() - start;

	for (i = 0; i < nworkers; i++) {
		/* after a timeout, errors are from the killing: ignore them */
		if (slots[i].syserr && !timed_out) {
			fprintf(stderr, "msgcount: worker %ld: %s\n", i,
				strerror(slots[i].syserr));
			syserr = 1;
		}
		sent += slots[i].sent;
		received += slots[i].received;
		gaps += slots[i].gaps;
		back += slots[i].back;
		malformed += slots[i].malformed;
		payload += slots[i].payload;
	}
	errors = gaps + back + malformed + payload;
	if (timed_out)
		printf("TIMEOUT after %.1f s: workers still running were killed\n", elapsed);
	printf("sent %lu, received %lu, errors %lu (sequence gaps %lu, steps back %lu,"
	       " malformed %lu, payload %lu), %.3f s, %.0f msg/s\n", sent, received,
	       errors, gaps, back, malformed, payload, elapsed, received / elapsed);
	printf("RESULT {\"groups\": %d, \"fds\": %d, \"loops\": %d, \"size\": %d,"
	       " \"mode\": \"%s\", \"transport\": \"%s\", \"sent\": %lu, \"received\": %lu,"
	       " \"errors\": %lu, \"seq_gaps\": %lu, \"seq_backwards\": %lu,"
	       " \"malformed\": %lu, \"payload_errors\": %lu, \"timeout\": %s,"
	       " \"system_error\": %s, \"seconds\": %.3f}\n",
	       groups, fds, loops, size, use_threads ? "threads" : "processes",
	       use_pipe ? "pipe" : "socket", sent, received, errors, gaps, back,
	       malformed, payload, timed_out ? "true" : "false",
	       syserr ? "true" : "false", elapsed);
	fflush(stdout);
	if (syserr)
		exit(1);
	if (timed_out || errors || received != sent)
		exit(2);
	return 0;
}
