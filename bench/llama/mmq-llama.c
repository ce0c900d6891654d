// llama.cpp's Vulkan backend as a peer of the bench: ggml_mul_mat (dense) and ggml_mul_mat_id (MoE) on Q4_K
// weights and f32 activations, timed the way llama.cpp's tests/test-backend-ops.cpp `perf` mode times an
// op, against the prebuilt ggml libraries of the npm package @node-llama-cpp/linux-x64-vulkan and the
// headers of the llama.cpp source node-llama-cpp ships (bench/install-llama.sh builds it; bench/llama.ts
// drives it and reads its output).
//
//   mmq-llama [--gpu-log] [--no-check] [--l2-bytes B] [--target-ms T] [--min-ms M] [--min-computes R]
//             [--max-nodes N] [--threads T] [--device I] [--seed S] CASE...
//   mmq-llama --version
//   CASE = dense:M,N,K | moe:EXPERTS,TOKENS,TOPK,N,K@IDS_FILE (IDS_FILE: TOKENS*TOPK little-endian int32
//          expert ids, slot t*TOPK + j; bench/llama.ts writes it from the bench's own routing)
//
// Per case, one JSON line on stdout. What it measures:
// - Operands: W Q4_K [K, N] (MoE: [K, N, EXPERTS]), X f32 [K, M] (MoE: [K, 1, TOKENS], every token's row
//   read by each of its TOPK slots, as llama.cpp's MoE FFN calls it), uniform [-1, 1] like test-backend-ops,
//   W quantized with ggml_quantize_chunk.
// - Graph: like test-backend-ops perf, the op repeated in one graph (at least 100 GFLOP per graph, as it
//   sizes it, and at least --target-ms of work, at most 8192 nodes), computed with
//   ggml_backend_graph_compute until --min-ms have passed. Unlike test-backend-ops, the nodes cycle through
//   weight banks of >= 4 x --l2-bytes (so weights are read cold, as this bench's own rows and a model's
//   layers read them) and two activation tensors (so every op converts or quantizes its activations, as
//   each op of a model does: ggml-vulkan skips that pass when one op's src1 is the previous op's), and
//   every node writes one output address (so each waits for the one before, as test-backend-ops's repeated
//   node does).
// - Wall time: per compute, host clock from the call to its return (the backend synchronizes), over its
//   node count; `ms` is the fastest compute's, `msMean` test-backend-ops's figure (all computes' mean).
// - --gpu-log: for the GPU-side time, run with GGML_VK_PERF_LOGGER=1 (ggml-vulkan prints a "Vulkan
//   Timings" block per compute, per node from timestamps around it); this harness marks, on stderr, where
//   the timed computes begin and end ("mmq-llama: timed <case> nodes=N", "mmq-llama: end <case>").
// - Which shaders ran (--gpu-log): this program defines vkGetInstanceProcAddr, which libggml-vulkan.so
//   links to (the dynamic linker resolves it here before libvulkan.so.1), and hands ggml-vulkan wrappers of
//   vkSetDebugUtilsObjectNameEXT (ggml-vulkan names each pipeline with it when GGML_VK_DEBUG_MARKERS is
//   set, which --gpu-log sets) and vkCmdBindPipeline: `pipelines` lists, per case, each pipeline bound
//   while its graphs were recorded and how often. The wall-time pass sets no markers and wraps nothing.
// - Check (unless --no-check): the output poisoned with NaN, one op computed, read back whole (every element
//   must be finite), and sampled rows (16 of M; MoE: 8 tokens, all their slots) compared with a float64
//   reference on the dequantized weights and the f32 activations: pass when the NMSE is at most 5e-4
//   (test-backend-ops's bound for MUL_MAT and MUL_MAT_ID); again after the timing, on the timed graph's
//   last node (so the timed graph computed real data).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-vulkan.h"
#include "ggml.h"

#define MAX_NODES 8192
#define X_BANKS 2
#define CHECK_ROWS 16
#define CHECK_TOKENS 8
#define MAX_NMSE 5e-4
// Weight matrices quantized for real per N x K, shared by every case of one run: an MoE case's experts
// beyond them, and every bank, are row rotations of these (cold reads need distinct addresses, not
// distinct values; Q4_K quantization takes one host thread about 2 s per 16M weights).
#define UNIQUE_EXPERTS 4
#define MAX_THREADS 64

typedef struct {
  int moe;
  int64_t m, n, k;             // dense: X rows, W rows, reduction (MoE: m = tokens x topk slots)
  int64_t experts, tokens, topk;
  const char *ids_path;
  char label[96];
} Case;

typedef struct {
  int gpu_log, check, device, max_nodes;
  double l2_bytes, target_ms, min_ms;
  int min_computes;
  uint64_t seed;
} Options;

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
    else putchar(*s);
  }
  putchar('"');
}

// ------------------------------------------------------------------ which pipelines ran (--gpu-log)
// The few Vulkan types the wrappers touch (ABI-stable; no Vulkan headers needed to build this file).
typedef void (*PFN_vkVoidFunction)(void);
typedef struct VkInstance_T *VkInstance;
typedef struct VkDevice_T *VkDevice;
typedef struct VkCommandBuffer_T *VkCommandBuffer;
typedef struct {
  int32_t sType;
  const void *pNext;
  int32_t objectType;
  uint64_t objectHandle;
  const char *pObjectName;
} VkDebugUtilsObjectNameInfoEXT;
#define VK_OBJECT_TYPE_PIPELINE 19
typedef PFN_vkVoidFunction (*PFN_getInstanceProcAddr)(VkInstance, const char *);
typedef PFN_vkVoidFunction (*PFN_getDeviceProcAddr)(VkDevice, const char *);
typedef int32_t (*PFN_setObjectName)(VkDevice, const VkDebugUtilsObjectNameInfoEXT *);
typedef void (*PFN_cmdBindPipeline)(VkCommandBuffer, int32_t, uint64_t);

#define NAMED_MAX 4096
#define BOUND_MAX 64
static int watch_pipelines;
static pthread_mutex_t named_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  uint64_t handle;
  char name[112];
} named[NAMED_MAX];
static int n_named;
static struct {
  char name[112];
  long count;
} bound[BOUND_MAX];
static int n_bound;
static PFN_setObjectName real_set_object_name;
static PFN_cmdBindPipeline real_cmd_bind_pipeline;
static PFN_getDeviceProcAddr real_get_device_proc_addr;

static int32_t wrap_set_object_name(VkDevice d, const VkDebugUtilsObjectNameInfoEXT *info) {
  if (info && info->objectType == VK_OBJECT_TYPE_PIPELINE && info->pObjectName) {
    pthread_mutex_lock(&named_lock); // ggml-vulkan compiles pipelines on several threads
    if (n_named < NAMED_MAX) {
      named[n_named].handle = info->objectHandle;
      snprintf(named[n_named++].name, sizeof named[0].name, "%s", info->pObjectName);
    }
    pthread_mutex_unlock(&named_lock);
  }
  return real_set_object_name ? real_set_object_name(d, info) : 0;
}

static void wrap_cmd_bind_pipeline(VkCommandBuffer cb, int32_t bind_point, uint64_t pipeline) {
  const char *name = "(unnamed)";
  pthread_mutex_lock(&named_lock);
  for (int i = n_named - 1; i >= 0; i--)
    if (named[i].handle == pipeline) {
      name = named[i].name;
      break;
    }
  int j = 0;
  while (j < n_bound && strcmp(bound[j].name, name)) j++;
  if (j == n_bound && n_bound < BOUND_MAX) snprintf(bound[n_bound++].name, sizeof bound[0].name, "%s", name);
  if (j < n_bound) bound[j].count++;
  pthread_mutex_unlock(&named_lock);
  real_cmd_bind_pipeline(cb, bind_point, pipeline);
}

static PFN_vkVoidFunction wrap_get_device_proc_addr(VkDevice d, const char *name);

/** The wrapper for `name`, keeping the real function, or the real function when it is not watched. */
static PFN_vkVoidFunction watched(const char *name, PFN_vkVoidFunction real) {
  if (!watch_pipelines || !real) return real;
  if (!strcmp(name, "vkSetDebugUtilsObjectNameEXT")) {
    real_set_object_name = (PFN_setObjectName)real;
    return (PFN_vkVoidFunction)wrap_set_object_name;
  }
  if (!strcmp(name, "vkCmdBindPipeline")) {
    real_cmd_bind_pipeline = (PFN_cmdBindPipeline)real;
    return (PFN_vkVoidFunction)wrap_cmd_bind_pipeline;
  }
  if (!strcmp(name, "vkGetDeviceProcAddr")) {
    real_get_device_proc_addr = (PFN_getDeviceProcAddr)real;
    return (PFN_vkVoidFunction)wrap_get_device_proc_addr;
  }
  return real;
}

static PFN_vkVoidFunction wrap_get_device_proc_addr(VkDevice d, const char *name) {
  return watched(name, real_get_device_proc_addr(d, name));
}

/** Interposes libvulkan's: libggml-vulkan.so resolves this symbol here and loads every function with it. */
__attribute__((visibility("default"))) PFN_vkVoidFunction vkGetInstanceProcAddr(VkInstance instance,
                                                                                const char *name) {
  static PFN_getInstanceProcAddr real;
  if (!real) real = (PFN_getInstanceProcAddr)dlsym(RTLD_NEXT, "vkGetInstanceProcAddr");
  if (!real) return NULL;
  return watched(name, real(instance, name));
}

static void print_bound(void) {
  printf(",\"pipelines\":[");
  for (int i = 0; i < n_bound; i++) {
    printf("%s{\"name\":", i ? "," : "");
    json_string(bound[i].name);
    printf(",\"binds\":%ld}", bound[i].count);
  }
  printf("]");
}

// ------------------------------------------------------------------------------------------ harness

static void die(const char *fmt, const char *arg) {
  fprintf(stderr, "mmq-llama: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  exit(2);
}

static uint64_t rng_state;
static inline uint64_t xorshift64(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static void fill_uniform(float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) x[i] = (float)((double)(xorshift64() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die("out of host memory (%s bytes)", "many");
  return p;
}

// The host's cores for quantizing weights and for the reference (both per row, independent).
static int n_threads = 1;
typedef void (*RowsFn)(void *ctx, int64_t lo, int64_t hi, int thread);
typedef struct {
  RowsFn fn;
  void *ctx;
  int64_t lo, hi;
  int thread;
} RowsJob;
static void *rows_job(void *arg) {
  RowsJob *j = arg;
  j->fn(j->ctx, j->lo, j->hi, j->thread);
  return NULL;
}
/** fn(ctx, lo, hi, thread) over [0, rows) split among the threads (the calling one included). */
static void parallel_rows(int64_t rows, RowsFn fn, void *ctx) {
  const int t_count = rows < n_threads ? (int)(rows > 0 ? rows : 1) : n_threads;
  pthread_t th[MAX_THREADS];
  RowsJob jobs[MAX_THREADS];
  for (int t = 0; t < t_count; t++) jobs[t] = (RowsJob){fn, ctx, rows * t / t_count, rows * (t + 1) / t_count, t};
  for (int t = 1; t < t_count; t++)
    if (pthread_create(&th[t], NULL, rows_job, &jobs[t])) die("%s", "cannot start a thread");
  rows_job(&jobs[0]);
  for (int t = 1; t < t_count; t++) pthread_join(th[t], NULL);
}

typedef struct {
  const float *f;
  uint8_t *q;
  int64_t k;
  size_t row_bytes;
} QuantizeJob;
static void quantize_rows(void *ctx, int64_t lo, int64_t hi, int thread) {
  const QuantizeJob *j = ctx;
  (void)thread;
  ggml_quantize_chunk(GGML_TYPE_Q4_K, j->f + lo * j->k, j->q + (size_t)lo * j->row_bytes, 0, hi - lo, j->k, NULL);
}

/** Quantized weights of one N x K: `count` matrices of N Q4_K rows, grown as cases ask for more. */
typedef struct {
  int64_t n, k, count;
  uint8_t *q;
} Bases;
static Bases bases[16];
static int n_bases;

/** `count` quantized N x K matrices (random uniform [-1, 1], seeded per N, K and matrix). */
static const uint8_t *quantized(int64_t n, int64_t k, int64_t count, uint64_t seed) {
  Bases *b = NULL;
  for (int i = 0; i < n_bases; i++)
    if (bases[i].n == n && bases[i].k == k) b = &bases[i];
  if (!b) {
    if (n_bases == 16) die("%s", "more than 16 weight shapes in one run");
    b = &bases[n_bases++];
    *b = (Bases){n, k, 0, NULL};
  }
  if (b->count >= count) return b->q;
  const size_t row_bytes = ggml_row_size(GGML_TYPE_Q4_K, k);
  uint8_t *q = realloc(b->q, row_bytes * (size_t)(n * count));
  if (!q) die("out of host memory (%s)", "quantized weights");
  b->q = q;
  float *f = xmalloc(sizeof(float) * (size_t)(n * k));
  for (int64_t u = b->count; u < count; u++) {
    rng_state = seed ^ (uint64_t)(n * 0x9E3779B1ull + k * 0x85EBCA77ull + (uint64_t)u * 0xC2B2AE3Dull);
    if (!rng_state) rng_state = 1;
    fill_uniform(f, n * k);
    QuantizeJob j = {f, q + (size_t)(u * n) * row_bytes, k, row_bytes};
    parallel_rows(n, quantize_rows, &j);
  }
  free(f);
  b->count = count;
  return b->q;
}

/** A case from its command-line spelling, or exits naming the bad one. */
static Case parse_case(const char *s) {
  Case c;
  memset(&c, 0, sizeof c);
  long long a[5];
  if (strncmp(s, "dense:", 6) == 0) {
    char tail;
    if (sscanf(s + 6, "%lld,%lld,%lld%c", &a[0], &a[1], &a[2], &tail) != 3 || a[0] < 1 || a[1] < 1 || a[2] < 1)
      die("bad case '%s' (want dense:M,N,K with positive whole numbers)", s);
    c.m = a[0], c.n = a[1], c.k = a[2];
    snprintf(c.label, sizeof c.label, "%lldx%lldx%lld", a[0], a[1], a[2]);
  } else if (strncmp(s, "moe:", 4) == 0) {
    const char *at = strchr(s, '@');
    int used = 0;
    if (!at || sscanf(s + 4, "%lld,%lld,%lld,%lld,%lld%n", &a[0], &a[1], &a[2], &a[3], &a[4], &used) != 5 ||
        s + 4 + used != at || at[1] == 0)
      die("bad case '%s' (want moe:EXPERTS,TOKENS,TOPK,N,K@IDS_FILE)", s);
    for (int i = 0; i < 5; i++)
      if (a[i] < 1) die("bad case '%s' (every number must be positive)", s);
    if (a[2] > a[0]) die("bad case '%s' (top-k exceeds the experts)", s);
    c.moe = 1, c.experts = a[0], c.tokens = a[1], c.topk = a[2], c.n = a[3], c.k = a[4];
    c.m = c.tokens * c.topk;
    c.ids_path = at + 1;
    snprintf(c.label, sizeof c.label, "moe%lldx%lld/top%lld/%lldx%lld", a[0], a[1], a[2], a[3], a[4]);
  } else {
    die("unknown case '%s' (want dense:M,N,K or moe:EXPERTS,TOKENS,TOPK,N,K@IDS_FILE)", s);
  }
  if (c.k % ggml_blck_size(GGML_TYPE_Q4_K) != 0) die("bad case '%s': K must be a multiple of 256 (one Q4_K block)", s);
  return c;
}

static double number(const char *flag, const char *v) {
  char *end;
  errno = 0;
  double x = v ? strtod(v, &end) : 0;
  if (!v || errno || *end || !(x > 0)) die("%s needs a positive number", flag);
  return x;
}

static unsigned long long whole(const char *flag, const char *v) {
  char *end;
  errno = 0;
  unsigned long long x = v && *v >= '0' && *v <= '9' ? strtoull(v, &end, 0) : 0;
  if (!v || errno || *end || !(*v >= '0' && *v <= '9')) die("%s needs a whole number", flag);
  return x;
}


/** What a case holds on the device and on the host. */
typedef struct {
  Case c;
  int banks;
  size_t row_bytes;         // one Q4_K row of K
  int64_t unique;           // matrices quantized for real (dense: 1; MoE: up to UNIQUE_EXPERTS)
  const uint8_t *wq;        // unique x N Q4_K rows (shared by the run's cases: not freed)
  float *x[X_BANKS];        // activations, host copies
  int32_t *ids;             // MoE routing
  struct ggml_context *ctx; // operands and nodes
  ggml_backend_buffer_t buf_in, buf_out;
  struct ggml_tensor *w[64], *xt[X_BANKS], *idt, *node[128];
  int n_nodes_distinct;
} Problem;

/** Rows the weight row `r` of expert `e` (0 for dense) in bank `b` is rotated by. */
static int64_t rotation(const Problem *p, int64_t e, int b) {
  const int64_t per_bank = p->c.moe ? p->c.experts / p->unique + 1 : 1;
  return (e / p->unique + (int64_t)b * per_bank) % p->c.n;
}
/** The quantized base row behind row `r` of expert `e` in bank `b`. */
static const uint8_t *base_row(const Problem *p, int64_t e, int b, int64_t r) {
  const int64_t ue = e % p->unique;
  return p->wq + (size_t)(ue * p->c.n + (r + rotation(p, e, b)) % p->c.n) * p->row_bytes;
}

static int setup(Problem *p, ggml_backend_t backend, const Options *o) {
  const Case *c = &p->c;
  p->row_bytes = ggml_row_size(GGML_TYPE_Q4_K, c->k);
  const int64_t experts = c->moe ? c->experts : 1;
  const double bank_bytes = (double)p->row_bytes * c->n * experts;
  p->banks = (int)ceil(4 * o->l2_bytes / bank_bytes);
  if (p->banks < 1) p->banks = 1;
  if (p->banks > 64) p->banks = 64;
  p->unique = experts < UNIQUE_EXPERTS ? experts : UNIQUE_EXPERTS;
  p->wq = quantized(c->n, c->k, p->unique, o->seed);
  rng_state = o->seed; // the activations: the same per case whatever ran before
  const int64_t x_rows = c->moe ? c->tokens : c->m;
  for (int i = 0; i < X_BANKS; i++) {
    p->x[i] = xmalloc(sizeof(float) * (size_t)(x_rows * c->k));
    fill_uniform(p->x[i], x_rows * c->k);
  }
  if (c->moe) {
    const size_t want = (size_t)(c->tokens * c->topk);
    p->ids = xmalloc(sizeof(int32_t) * want);
    FILE *f = fopen(c->ids_path, "rb");
    if (!f) die("cannot open the ids file %s", c->ids_path);
    size_t got = fread(p->ids, sizeof(int32_t), want, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != want || extra) die("the ids file %s does not hold TOKENS x TOPK int32 ids", c->ids_path);
    for (size_t i = 0; i < want; i++)
      if (p->ids[i] < 0 || p->ids[i] >= c->experts) die("the ids file %s names an expert out of range", c->ids_path);
  }

  // Nodes: node j reads bank j % banks and activations j % 2; as many distinct ones as the cycle has.
  p->n_nodes_distinct = p->banks % X_BANKS == 0 ? p->banks : p->banks * X_BANKS;
  struct ggml_init_params ip = {
      .mem_size = ggml_tensor_overhead() * (size_t)(p->banks + X_BANKS + 1 + p->n_nodes_distinct + 8) +
                  ggml_graph_overhead_custom(MAX_NODES, false) * 3,
      .mem_buffer = NULL,
      .no_alloc = true,
  };
  p->ctx = ggml_init(ip);
  for (int b = 0; b < p->banks; b++)
    p->w[b] = c->moe ? ggml_new_tensor_3d(p->ctx, GGML_TYPE_Q4_K, c->k, c->n, c->experts)
                     : ggml_new_tensor_2d(p->ctx, GGML_TYPE_Q4_K, c->k, c->n);
  for (int i = 0; i < X_BANKS; i++)
    p->xt[i] = c->moe ? ggml_new_tensor_3d(p->ctx, GGML_TYPE_F32, c->k, 1, c->tokens)
                      : ggml_new_tensor_2d(p->ctx, GGML_TYPE_F32, c->k, c->m);
  p->idt = c->moe ? ggml_new_tensor_2d(p->ctx, GGML_TYPE_I32, c->topk, c->tokens) : NULL;
  p->buf_in = ggml_backend_alloc_ctx_tensors(p->ctx, backend);
  if (!p->buf_in) return 0;
  for (int j = 0; j < p->n_nodes_distinct; j++) {
    struct ggml_tensor *w = p->w[j % p->banks], *x = p->xt[j % X_BANKS];
    p->node[j] = c->moe ? ggml_mul_mat_id(p->ctx, w, x, p->idt) : ggml_mul_mat(p->ctx, w, x);
  }
  // Every node writes the same bytes: each waits for the one before (ggml-vulkan syncs on the overlap).
  const size_t out_bytes = ggml_nbytes(p->node[0]);
  ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(backend);
  p->buf_out = ggml_backend_buft_alloc_buffer(buft, out_bytes + ggml_backend_buft_get_alignment(buft));
  if (!p->buf_out) return 0;
  void *base = ggml_backend_buffer_get_base(p->buf_out);
  for (int j = 0; j < p->n_nodes_distinct; j++) ggml_backend_tensor_alloc(p->buf_out, p->node[j], base);

  // Upload: bank b's expert e is its base expert with rows rotated (two copies around the seam).
  for (int b = 0; b < p->banks; b++)
    for (int64_t e = 0; e < experts; e++) {
      const int64_t rot = rotation(p, e, b);
      const uint8_t *src = base_row(p, e, b, 0); // = base row `rot`
      const size_t expert_off = (size_t)(e * c->n) * p->row_bytes;
      const size_t head = (size_t)(c->n - rot) * p->row_bytes;
      ggml_backend_tensor_set(p->w[b], src, expert_off, head);
      if (rot) ggml_backend_tensor_set(p->w[b], src - (size_t)rot * p->row_bytes, expert_off + head, (size_t)rot * p->row_bytes);
    }
  for (int i = 0; i < X_BANKS; i++) ggml_backend_tensor_set(p->xt[i], p->x[i], 0, ggml_nbytes(p->xt[i]));
  if (c->moe) ggml_backend_tensor_set(p->idt, p->ids, 0, ggml_nbytes(p->idt));
  return 1;
}

/** A graph of `n` nodes cycling through the distinct ones. */
static struct ggml_cgraph *graph_of(Problem *p, int n) {
  struct ggml_cgraph *g = ggml_new_graph_custom(p->ctx, MAX_NODES, false);
  const int distinct = n < p->n_nodes_distinct ? n : p->n_nodes_distinct;
  for (int j = 0; j < distinct; j++) ggml_build_forward_expand(g, p->node[j]);
  for (int i = distinct; i < n; i++) ggml_graph_add_node(g, p->node[i % p->n_nodes_distinct]);
  return g;
}

typedef struct {
  int pass, all_written;
  double nmse, rel_to_max;
  int64_t samples;
} Check;

/** Sums of the reference comparison, per thread. */
typedef struct {
  double err2, ref2, max_err, max_ref;
  int64_t samples;
} CheckSums;

/** One expert's share of the reference: its rows against the sampled (row, slot) outputs that read it. */
typedef struct {
  const Problem *p;
  int b;
  int64_t e, s_count;
  const int64_t *sample;
  const float *x, *out;
  CheckSums sums[MAX_THREADS];
} CheckJob;

static void check_rows(void *ctx, int64_t lo, int64_t hi, int thread) {
  CheckJob *j = ctx;
  const Case *c = &j->p->c;
  const ggml_to_float_t to_float = ggml_get_type_traits(GGML_TYPE_Q4_K)->to_float;
  float *wrow = xmalloc(sizeof(float) * (size_t)c->k);
  CheckSums *r = &j->sums[thread];
  for (int64_t row = lo; row < hi; row++) {
    to_float(base_row(j->p, j->e, j->b, row), wrow, c->k);
    for (int64_t s = 0; s < j->s_count; s++) {
      const float *xr = j->x + (size_t)(j->sample[s] * c->k);
      for (int64_t t = 0; t < (c->moe ? c->topk : 1); t++) {
        if (c->moe && j->p->ids[j->sample[s] * c->topk + t] != j->e) continue;
        double acc = 0;
        for (int64_t d = 0; d < c->k; d++) acc += (double)wrow[d] * xr[d];
        // Output [N, M] (MoE: [N, TOPK, TOKENS]): element (row, slot) at slot * N + row.
        const int64_t slot = c->moe ? j->sample[s] * c->topk + t : j->sample[s];
        const double d = j->out[(size_t)(slot * c->n + row)] - acc;
        r->err2 += d * d, r->ref2 += acc * acc, r->samples++;
        if (!(fabs(d) <= r->max_err)) r->max_err = fabs(d); // NaN propagates
        if (fabs(acc) > r->max_ref) r->max_ref = fabs(acc);
      }
    }
  }
  free(wrow);
}

/**
 * Node j's output (read back whole) against a float64 reference on the dequantized weights at sampled
 * rows (dense: CHECK_ROWS of M; MoE: CHECK_TOKENS tokens, all their slots).
 */
static Check check_node(Problem *p, int j) {
  const Case *c = &p->c;
  const size_t n_out = (size_t)(c->m * c->n);
  float *out = xmalloc(sizeof(float) * n_out);
  ggml_backend_tensor_get(p->node[j], out, 0, sizeof(float) * n_out);
  Check r = {.all_written = 1};
  for (size_t i = 0; i < n_out; i++)
    if (!isfinite(out[i])) {
      r.all_written = 0;
      break;
    }
  const int64_t rows = c->moe ? c->tokens : c->m;
  const int64_t want = c->moe ? CHECK_TOKENS : CHECK_ROWS;
  const int64_t s_count = rows < want ? rows : want;
  int64_t *sample = xmalloc(sizeof(int64_t) * (size_t)s_count);
  for (int64_t s = 0; s < s_count; s++) sample[s] = s_count == 1 ? 0 : s * (rows - 1) / (s_count - 1);
  CheckJob *job = calloc(1, sizeof(CheckJob));
  if (!job) die("out of host memory (%s)", "check");
  *job = (CheckJob){.p = p, .b = j % p->banks, .s_count = s_count, .sample = sample, .x = p->x[j % X_BANKS], .out = out};
  const int64_t experts = c->moe ? c->experts : 1;
  for (int64_t e = 0; e < experts; e++) {
    // Only experts a sampled slot reads (dense: the one weight).
    int any = !c->moe;
    for (int64_t s = 0; s < s_count && !any; s++)
      for (int64_t t = 0; t < c->topk; t++) any |= p->ids[sample[s] * c->topk + t] == e;
    if (!any) continue;
    job->e = e;
    parallel_rows(c->n, check_rows, job);
  }
  CheckSums sum = {0};
  for (int t = 0; t < MAX_THREADS; t++) {
    const CheckSums *q = &job->sums[t];
    sum.err2 += q->err2, sum.ref2 += q->ref2, sum.samples += q->samples;
    if (!(q->max_err <= sum.max_err)) sum.max_err = q->max_err;
    if (q->max_ref > sum.max_ref) sum.max_ref = q->max_ref;
  }
  r.samples = sum.samples;
  r.nmse = sum.ref2 > 0 ? sum.err2 / sum.ref2 : sum.err2;
  r.rel_to_max = sum.max_err / (sum.max_ref > 0 ? sum.max_ref : 1e-30);
  r.pass = r.all_written && r.samples > 0 && r.nmse <= MAX_NMSE;
  free(job), free(sample), free(out);
  return r;
}

static void print_check(const char *key, Check r) {
  printf(",\"%s\":{\"pass\":%s,\"nmse\":%.6g,\"relToMax\":%.6g,\"samples\":%lld,\"allWritten\":%s,\"tol\":%g}", key,
         r.pass ? "true" : "false", isfinite(r.nmse) ? r.nmse : -1, isfinite(r.rel_to_max) ? r.rel_to_max : -1,
         (long long)r.samples, r.all_written ? "true" : "false", MAX_NMSE);
}

static double compute_ms(ggml_backend_t backend, struct ggml_cgraph *g, enum ggml_status *st) {
  const int64_t t0 = ggml_time_us();
  *st = ggml_backend_graph_compute(backend, g);
  return (ggml_time_us() - t0) / 1000.0;
}

static void print_case_head(const Case *c) {
  printf("{\"case\":");
  json_string(c->label);
  printf(",\"kind\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld", c->moe ? "moe" : "dense", (long long)c->m,
         (long long)c->n, (long long)c->k);
  if (c->moe)
    printf(",\"experts\":%lld,\"tokens\":%lld,\"topk\":%lld", (long long)c->experts, (long long)c->tokens,
           (long long)c->topk);
}

static void fail_case(const Case *c, const char *why) {
  print_case_head(c);
  printf(",\"error\":");
  json_string(why);
  printf("}\n");
  fflush(stdout);
}

static void run_case(ggml_backend_t backend, const Case *c, const Options *o) {
  Problem p;
  memset(&p, 0, sizeof p);
  p.c = *c;
  if (!setup(&p, backend, o)) {
    fail_case(c, "could not allocate the operands on the device");
    goto done;
  }
  enum ggml_status st;
  Check before = {0}, after = {0};
  // One op first: compiles the pipelines it needs, and is the check.
  struct ggml_cgraph *one = graph_of(&p, 1);
  ggml_backend_tensor_memset(p.node[0], 0xff, 0, ggml_nbytes(p.node[0])); // all-ones bits: NaN
  compute_ms(backend, one, &st);
  if (st != GGML_STATUS_SUCCESS) {
    fail_case(c, ggml_status_to_string(st));
    goto done;
  }
  if (o->check) before = check_node(&p, 0);
  // Nodes per graph: test-backend-ops's (100 GFLOP, + 1), raised to --target-ms of work from a timed guess.
  const double flops = 2.0 * (double)c->m * (double)c->n * (double)c->k;
  double n_flop = floor(100e9 / flops) + 1;
  int nodes = (int)(n_flop < o->max_nodes ? n_flop : o->max_nodes);
  struct ggml_cgraph *g = graph_of(&p, nodes);
  compute_ms(backend, g, &st); // the other banks' first touch
  const double guess = compute_ms(backend, g, &st) / nodes;
  if (st != GGML_STATUS_SUCCESS) {
    fail_case(c, ggml_status_to_string(st));
    goto done;
  }
  const double by_time = ceil(o->target_ms / (guess > 1e-6 ? guess : 1e-6));
  if (by_time > nodes) {
    nodes = (int)(by_time < o->max_nodes ? by_time : o->max_nodes);
    g = graph_of(&p, nodes);
    compute_ms(backend, g, &st);
  }
  if (o->gpu_log) {
    fflush(stdout);
    fprintf(stderr, "mmq-llama: timed %s nodes=%d\n", c->label, nodes);
  }
  n_bound = 0; // the pipelines of the timed graph
  double samples[4096], total = 0, best = INFINITY;
  int computes = 0;
  while ((total < o->min_ms || computes < o->min_computes) && computes < 4096) {
    const double t = compute_ms(backend, g, &st);
    if (st != GGML_STATUS_SUCCESS) break;
    samples[computes++] = t;
    total += t;
    if (t < best) best = t;
  }
  if (o->gpu_log) fprintf(stderr, "mmq-llama: end %s\n", c->label);
  if (st != GGML_STATUS_SUCCESS) {
    fail_case(c, ggml_status_to_string(st));
    goto done;
  }
  if (o->check) {
    ggml_backend_tensor_memset(p.node[0], 0xff, 0, ggml_nbytes(p.node[0]));
    compute_ms(backend, g, &st);
    after = check_node(&p, (nodes - 1) % p.n_nodes_distinct);
  }
  print_case_head(c);
  printf(",\"mode\":\"%s\",\"nodes\":%d,\"banks\":%d,\"bankBytes\":%.0f,\"computes\":%d,\"ms\":%.6g,\"msMean\":%.6g",
         o->gpu_log ? "gpu-log" : "wall", nodes, p.banks,
         (double)p.row_bytes * c->n * (c->moe ? c->experts : 1), computes, best / nodes, total / computes / nodes);
  printf(",\"computeMs\":[");
  for (int i = 0; i < computes; i++) printf("%s%.6g", i ? "," : "", samples[i]);
  printf("]");
  if (o->gpu_log) print_bound();
  if (o->check) print_check("check", before), print_check("checkAfter", after);
  printf("}\n");
  fflush(stdout);
done:
  if (p.buf_out) ggml_backend_buffer_free(p.buf_out);
  if (p.buf_in) ggml_backend_buffer_free(p.buf_in);
  if (p.ctx) ggml_free(p.ctx);
  free(p.x[0]), free(p.x[1]), free(p.ids);
}

int main(int argc, char **argv) {
  Options o = {.check = 1, .l2_bytes = 60.0 * 1024 * 1024, .target_ms = 25, .min_ms = 1000, .min_computes = 6,
               .max_nodes = MAX_NODES, .seed = 0x9E3779B97F4A7C15ull};
  Case *cases = xmalloc(sizeof(Case) * (size_t)argc);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  n_threads = cores > 1 ? (int)cores : 1;
  int n_cases = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--version")) {
      printf("{\"ggml\":");
      json_string(ggml_version());
      printf(",\"commit\":");
      json_string(ggml_commit());
      printf(",\"ggmlOps\":%d,\"mulMat\":", GGML_OP_COUNT);
      json_string(ggml_op_name(GGML_OP_MUL_MAT));
      printf(",\"mulMatId\":");
      json_string(ggml_op_name(GGML_OP_MUL_MAT_ID));
      printf(",\"q4k\":");
      json_string(ggml_type_name(GGML_TYPE_Q4_K));
      printf("}\n");
      return 0;
    } else if (!strcmp(a, "--gpu-log")) o.gpu_log = 1;
    else if (!strcmp(a, "--no-check")) o.check = 0;
    else if (!strcmp(a, "--l2-bytes")) o.l2_bytes = number(a, v), i++;
    else if (!strcmp(a, "--target-ms")) o.target_ms = number(a, v), i++;
    else if (!strcmp(a, "--min-ms")) o.min_ms = number(a, v), i++;
    else if (!strcmp(a, "--min-computes")) o.min_computes = (int)number(a, v), i++;
    else if (!strcmp(a, "--max-nodes")) o.max_nodes = (int)number(a, v), i++;
    else if (!strcmp(a, "--threads")) n_threads = (int)number(a, v), i++;
    else if (!strcmp(a, "--device")) o.device = (int)whole(a, v), i++;
    else if (!strcmp(a, "--seed")) o.seed = whole(a, v) | 1, i++;
    else if (a[0] == '-') die("unknown option %s", a);
    else cases[n_cases++] = parse_case(a);
  }
  if (n_threads > MAX_THREADS) n_threads = MAX_THREADS;
  if (n_threads < 1) n_threads = 1;
  if (o.max_nodes < 1 || o.max_nodes > MAX_NODES) die("%s", "--max-nodes must be 1..8192");
  // Before ggml-vulkan creates its instance: it reads the variable then.
  if (o.gpu_log) watch_pipelines = 1, setenv("GGML_VK_DEBUG_MARKERS", "1", 1);
  if (!n_cases) die("%s", "no case (want dense:M,N,K or moe:EXPERTS,TOKENS,TOPK,N,K@IDS_FILE)");
  // The tables in ggml-base and the ops the headers name must agree, or the headers are not this build's.
  if (strcmp(ggml_op_name(GGML_OP_MUL_MAT), "MUL_MAT") || strcmp(ggml_op_name(GGML_OP_MUL_MAT_ID), "MUL_MAT_ID") ||
      strcmp(ggml_type_name(GGML_TYPE_Q4_K), "q4_K"))
    die("%s", "the ggml headers do not match libggml-base.so (op or type tables differ)");
  ggml_time_init();
  const int count = ggml_backend_vk_get_device_count();
  if (o.device >= count) die("%s", "no such Vulkan device (ggml-vulkan lists fewer; see its log above)");
  char desc[256];
  ggml_backend_vk_get_device_description(o.device, desc, sizeof desc);
  ggml_backend_t backend = ggml_backend_vk_init((size_t)o.device);
  if (!backend) die("%s", "ggml_backend_vk_init failed");
  printf("{\"device\":");
  json_string(desc);
  printf(",\"ggml\":");
  json_string(ggml_version());
  printf(",\"commit\":");
  json_string(ggml_commit());
  printf("}\n");
  fflush(stdout);
  for (int i = 0; i < n_cases; i++) run_case(backend, &cases[i], &o);
  ggml_backend_free(backend);
  free(cases);
  return 0;
}
