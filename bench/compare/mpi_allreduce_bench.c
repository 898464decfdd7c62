/* MPI_Allreduce (float32, MPI_SUM) size sweep: the OpenMPI baseline hoop is compared against.
 *
 * Per size: one verified call, -w warm-ups, then k timed iterations, each preceded by an
 * MPI_Barrier. The time of one iteration is the slowest rank's (MPI_Reduce MAX over the
 * per-iteration times), and the reported figure is the median over iterations. k is at least -n
 * and is raised for small sizes so a size runs for at least -m seconds (default 0.2).
 *
 * Output (rank 0): '#' comment lines, then one row per size:
 *   bytes count median_us algbw_GBs busbw_GBs
 * busbw = algbw * 2(n-1)/n, the nccl-tests convention. Exit status 1 on a wrong result.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxIters = 200000 };

typedef struct {
  size_t min_bytes;
  size_t max_bytes;
  size_t factor;
  long iters;
  long warmup;
  double min_seconds;
  double max_seconds;
} Options;

/* "64", "8K", "1M", "2G" (binary multiples). Returns 0 on a malformed value. */
static int parse_size(const char* s, size_t* out) {
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || end == s) return 0;
  switch (*end) {
    case 'k':
    case 'K':
      v <<= 10;
      ++end;
      break;
    case 'm':
    case 'M':
      v <<= 20;
      ++end;
      break;
    case 'g':
    case 'G':
      v <<= 30;
      ++end;
      break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return 0;
  *out = (size_t)v;
  return 1;
}

static void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s [-b minbytes] [-e maxbytes] [-f factor] [-n iters] [-w warmup]\n"
          "          [-m minsec] [-M maxsec]\n"
          "  sizes take K/M/G suffixes; defaults -b 8 -e 256M -f 4 -n 20 -w 5 -m 0.2 -M 0\n"
          "  -m: raise iterations so a size runs >= minsec; -M: lower them (to >= 3) so it runs\n"
          "  <= maxsec (0: no cap)\n",
          argv0);
}

static int parse_args(int argc, char** argv, Options* o) {
  o->min_bytes = 8;
  o->max_bytes = (size_t)256 << 20;
  o->factor = 4;
  o->iters = 20;
  o->warmup = 5;
  o->min_seconds = 0.2;
  o->max_seconds = 0.0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return 0;
    if (i + 1 >= argc) return 0;
    const char* v = argv[++i];
    size_t sz = 0;
    if (strcmp(a, "-b") == 0 && parse_size(v, &sz)) {
      o->min_bytes = sz;
    } else if (strcmp(a, "-e") == 0 && parse_size(v, &sz)) {
      o->max_bytes = sz;
    } else if (strcmp(a, "-f") == 0 && parse_size(v, &sz) && sz >= 2) {
      o->factor = sz;
    } else if (strcmp(a, "-n") == 0 && atol(v) > 0) {
      o->iters = atol(v);
    } else if (strcmp(a, "-w") == 0 && atol(v) >= 0) {
      o->warmup = atol(v);
    } else if (strcmp(a, "-m") == 0 && atof(v) >= 0) {
      o->min_seconds = atof(v);
    } else if (strcmp(a, "-M") == 0 && atof(v) >= 0) {
      o->max_seconds = atof(v);
    } else {
      return 0;
    }
  }
  if (o->min_bytes < sizeof(float) || o->max_bytes < o->min_bytes) return 0;
  if (o->max_bytes / sizeof(float) > (size_t)INT_MAX) return 0; /* MPI counts are int */
  return 1;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Small integers, so every summation order gives the same float exactly. */
static float input_value(int rank, size_t i) { return (float)((i * 7 + (size_t)rank * 3) % 23); }

static int verify(const float* out, size_t count, int nranks) {
  for (size_t i = 0; i < count; ++i) {
    float want = 0.0f;
    for (int r = 0; r < nranks; ++r) want += input_value(r, i);
    if (out[i] != want) return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  Options o;
  if (!parse_args(argc, argv, &o)) {
    if (rank == 0) usage(argv[0]);
    MPI_Finalize();
    return 2;
  }

  size_t max_count = o.max_bytes / sizeof(float);
  float* send = malloc(max_count * sizeof(float));
  float* recv = malloc(max_count * sizeof(float));
  double* times = malloc(kMaxIters * sizeof(double));
  double* max_times = malloc(kMaxIters * sizeof(double));
  if (send == NULL || recv == NULL || times == NULL || max_times == NULL) {
    fprintf(stderr, "rank %d: out of memory for %zu bytes\n", rank, o.max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (size_t i = 0; i < max_count; ++i) send[i] = input_value(rank, i);

  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char* nl = strchr(lib, '\n');
    if (nl != NULL) *nl = '\0';
    printf("# peer=mpi lib=\"%s\"\n", lib);
    printf(
        "# MPI_Allreduce float32 sum, out-of-place, ranks=%d warmup=%ld iters=%ld minsec=%g "
        "maxsec=%g\n",
        nranks, o.warmup, o.iters, o.min_seconds, o.max_seconds);
    printf("# time = median over iterations of the slowest rank, barrier before each iteration\n");
    printf("# %12s %12s %12s %10s %10s\n", "bytes", "count", "median_us", "algbw_GBs", "busbw_GBs");
    fflush(stdout);
  }

  int failed = 0;
  for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
    int count = (int)(bytes / sizeof(float));
    size_t real_bytes = (size_t)count * sizeof(float);

    /* Correctness, once per size. */
    memset(recv, 0xff, real_bytes);
    MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    int ok = verify(recv, (size_t)count, nranks), all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
      if (rank == 0) fprintf(stderr, "WRONG RESULT at %zu bytes\n", real_bytes);
      failed = 1;
    }

    /* Warm-ups double as the estimate that sets the iteration count (same on every rank). */
    double t0 = MPI_Wtime();
    long est_runs = o.warmup > 0 ? o.warmup : 1;
    for (long i = 0; i < est_runs; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double per_iter = (MPI_Wtime() - t0) / (double)est_runs, max_per_iter = 0.0;
    MPI_Allreduce(&per_iter, &max_per_iter, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long iters = o.iters;
    if (max_per_iter > 0.0 && (double)iters * max_per_iter < o.min_seconds)
      iters = (long)ceil(o.min_seconds / max_per_iter);
    if (o.max_seconds > 0.0 && (double)iters * max_per_iter > o.max_seconds) {
      iters = (long)(o.max_seconds / max_per_iter);
      if (iters < 3) iters = 3;
    }
    if (iters > kMaxIters) iters = kMaxIters;

    for (long i = 0; i < iters; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      double start = MPI_Wtime();
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      times[i] = MPI_Wtime() - start;
    }
    MPI_Reduce(times, max_times, (int)iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    if (rank == 0) {
      qsort(max_times, (size_t)iters, sizeof(double), cmp_double);
      double med = (iters % 2) ? max_times[iters / 2]
                               : 0.5 * (max_times[iters / 2 - 1] + max_times[iters / 2]);
      double algbw = (double)real_bytes / med / 1e9;
      double busbw = algbw * 2.0 * (nranks - 1) / nranks;
      printf("  %12zu %12d %12.2f %10.3f %10.3f\n", real_bytes, count, med * 1e6, algbw, busbw);
      fflush(stdout);
    }
    if (bytes > SIZE_MAX / o.factor) break;
  }

  free(send);
  free(recv);
  free(times);
  free(max_times);
  MPI_Finalize();
  return failed ? 1 : 0;
}
