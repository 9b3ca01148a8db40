/* Diagnostic: a SCHED_FIFO heartbeat that writes the sched_ext state and
 * every R/D task (with wchan) to /dev/kmsg every 5 s.  RT tasks are not
 * scheduled by sched_ext, so it keeps running if SCHED_NORMAL starves. */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <stdlib.h>

static void slurp(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t k = 0;

	buf[0] = 0;
	if (!f)
		return;
	k = fread(buf, 1, n - 1, f);
	buf[k] = 0;
	fclose(f);
	while (k && (buf[k - 1] == '\n'))
		buf[--k] = 0;
}

int main(void)
{
	struct sched_param sp = { .sched_priority = 50 };
	char state[64], line[4096], path[256], stat[1024], wchan[128];
	FILE *kmsg;

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		perror("sched_setscheduler");
	for (int tick = 0;; tick++) {
		sleep(5);
		kmsg = fopen("/dev/kmsg", "w");
		if (!kmsg)
			continue;
		slurp("/sys/kernel/sched_ext/state", state, sizeof(state));
		snprintf(line, sizeof(line), "HB %d scx=%s:", tick, state);
		DIR *d = opendir("/proc");
		struct dirent *e;
		int nr = 0;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
			slurp(path, stat, sizeof(stat));
			char *rp = strrchr(stat, ')');
			if (!rp || (tick != 16 && rp[2] != 'R' && rp[2] != 'D') || (tick == 16 && strstr(stat, "kworker")))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/wchan", e->d_name);
			slurp(path, wchan, sizeof(wchan));
			char *lp = strchr(stat, '(');
			*rp = 0;
			if (tick == 16) {
				FILE *k2 = fopen("/dev/kmsg", "w");
				if (k2) {
					fprintf(k2, "HBT %s %s %c %s\n", e->d_name, lp ? lp + 1 : "?", rp[2], wchan);
					fclose(k2);
				}
			} else if (strlen(line) < sizeof(line) - 100) {
				size_t l = strlen(line);
				snprintf(line + l, sizeof(line) - l, " %s(%s)%c:%s", e->d_name,
					 lp ? lp + 1 : "?", rp[2], wchan);
			}
			nr++;
		}
		if (d)
			closedir(d);
		fprintf(kmsg, "%s [%d]\n", line, nr);
		fclose(kmsg);
		if (tick == 1000) {	/* 125 s: kill the sched_ext loader, see if it recovers */
			kmsg = fopen("/dev/kmsg", "w");
			DIR *d2 = opendir("/proc");
			struct dirent *e2;
			while (d2 && (e2 = readdir(d2))) {
				char comm[64];
				snprintf(path, sizeof(path), "/proc/%s/comm", e2->d_name);
				slurp(path, comm, sizeof(comm));
				if (!strncmp(comm, "scx_", 4)) {
					if (kmsg)
						fprintf(kmsg, "HB killing %s %s\n", e2->d_name, comm);
					kill(atoi(e2->d_name), 9);
				}
			}
			if (d2)
				closedir(d2);
			if (kmsg)
				fclose(kmsg);
		}
	}
}
