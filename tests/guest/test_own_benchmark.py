"""Your own benchmark, end to end: a program the repository does not ship
(built here from a few lines of C) goes into the
guest image with --file, runs as a custom workload (command template with
{level}, metric regex) through `idlesteal bench`, and the kept run
directory is read back with `idlesteal collect`."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from idlesteal import cli

pytestmark = pytest.mark.guest

MYBENCH_C = r"""
/* mybench: T pairs of threads ping-pong a byte over pipes N times each;
 * prints the p99 round-trip latency. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int n;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *echo(void *arg)
{
	int *p = arg;
	char c;

	while (read(p[0], &c, 1) == 1 && write(p[3], &c, 1) == 1)
		;
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void *ping(void *arg)
{
	int *p = arg;
	double *lat = malloc(n * sizeof(*lat));
	char c = 'x';
	pthread_t t;

	pthread_create(&t, NULL, echo, p);
	for (int i = 0; i < n; i++) {
		double t0 = now_us();

		if (write(p[1], &c, 1) != 1 || read(p[2], &c, 1) != 1)
			exit(1);
		lat[i] = now_us() - t0;
	}
	close(p[1]);
	pthread_join(t, NULL);
	return lat;
}

int main(int argc, char **argv)
{
	int opt, threads = 1;

	n = 1000;
	while ((opt = getopt(argc, argv, "t:n:")) != -1) {
		if (opt == 't')
			threads = atoi(optarg);
		else if (opt == 'n')
			n = atoi(optarg);
		else
			return 2;
	}
	pthread_t tid[threads];
	int pipes[threads][4];
	double *all = malloc((size_t)threads * n * sizeof(*all));

	for (int i = 0; i < threads; i++) {
		/* ping writes [1], echo reads [0]; echo writes [3], ping reads [2] */
		if (pipe(&pipes[i][0]) || pipe(&pipes[i][2]))
			return 1;
		pthread_create(&tid[i], NULL, ping, pipes[i]);
	}
	for (int i = 0; i < threads; i++) {
		double *lat;

		pthread_join(tid[i], (void **)&lat);
		for (int j = 0; j < n; j++)
			all[(size_t)i * n + j] = lat[j];
	}
	qsort(all, (size_t)threads * n, sizeof(*all), cmp);
	printf("p50 latency: %.1f us\n", all[(size_t)threads * n / 2]);
	printf("p99 latency: %.1f us\n", all[(size_t)threads * n * 99 / 100]);
	return 0;
}
"""


@pytest.fixture(scope="module")
def mybench(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("mybench")
    (d / "mybench.c").write_text(MYBENCH_C)
    subprocess.run(["gcc", "-O2", "-Wall", "-pthread", "-o", str(d / "mybench"),
                    str(d / "mybench.c")], check=True)
    return d / "mybench"


def test_own_program_through_bench_and_collect(guest, mybench, tmp_path, capsys):
    argv = ["bench", "--no-build", "--variant", guest.variant, "--preset", "2x2x2",
            "--workload", "mybench", "--command", "mybench -t {level} -n {size}",
            "--metric", r"p99 latency: ([0-9.]+) us", "--unit", "us",
            "--levels", "1,4", "--size", "200", "--reps", "2", "--warmup", "0",
            "--file", str(mybench), "--name", "mybench", "--outdir", str(tmp_path)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "NO_STEAL" in out and "%speedup" in out
    data = json.loads((tmp_path / "mybench.json").read_text())
    w = data["meta"]["workload"]
    assert w["name"] == "mybench" and w["definition"]["command"] == "mybench -t {level} -n {size}"
    assert w["files"] == [f"{mybench}:/usr/local/bin/mybench"]
    runs = data["runs"]
    assert sorted((r["level"], r["side"]) for r in runs) == sorted(
        [(lv, s) for lv in (1, 4) for s in "AB"] * 2)
    assert all(r["value"] > 0 for r in runs)

    # The same run directory, re-read: the same measurements.
    run_dir = data["meta"]["guest"]["run_dir"]
    assert cli.main(["collect", run_dir, "--outdir", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "mybench.json").read_text())
    assert [r["value"] for r in again["runs"]] == [r["value"] for r in runs]
