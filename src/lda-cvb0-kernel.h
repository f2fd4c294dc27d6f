/* The per-document kernel of SCVB0, written once and compiled (included by
 * lda-cvb0.c) for several vector widths: CVB0_VW doubles per vector (2:
 * SSE2, the x86-64 baseline; 4: AVX2; 8: AVX-512), or 0 for plain scalar C.
 * CVB0_SUF names the instance and CVB0_TARGET is its target attribute.
 *
 * Every instance computes exactly the same bits: the element-wise products
 * and sums are the same IEEE operations in any width (lda-cvb0.c turns off
 * the contraction of a * b + c into fused multiply-adds), and the sum over
 * the K topics always uses eight partial sums q_j (topics k = j mod 8, in
 * increasing k) combined as ((q0 + q4) + (q2 + q6)) + ((q1 + q5) + (q3 + q7)),
 * then the K mod 8 last topics one by one. */

#define CVB0_CAT2(a, b) a##_##b
#define CVB0_CAT(a, b) CVB0_CAT2(a, b)
#define CVB0_FN(name) CVB0_CAT(name, CVB0_SUF)

#if CVB0_VW > 0
typedef double CVB0_FN(cvb0_vec) __attribute__((vector_size(8 * CVB0_VW)));
typedef long long CVB0_FN(cvb0_ivec) __attribute__((vector_size(8 * CVB0_VW)));
#define CVB0_V CVB0_FN(cvb0_vec)
#define CVB0_IV CVB0_FN(cvb0_ivec)
#define CVB0_NACC (8 / CVB0_VW)

CVB0_TARGET static inline CVB0_V CVB0_FN(vload)(const double *p) {
  CVB0_V v;
  memcpy(&v, p, sizeof v);
  return v;
}
CVB0_TARGET static inline void CVB0_FN(vstore)(double *p, CVB0_V v) {
  memcpy(p, &v, sizeof v);
}
CVB0_TARGET static inline CVB0_V CVB0_FN(vsplat)(double a) {
  CVB0_V v;
  for (int l = 0; l < CVB0_VW; l++) v[l] = a;
  return v;
}
CVB0_TARGET static inline double CVB0_FN(vreduce)(const CVB0_V *acc) {
  double q[8];
  memcpy(q, acc, sizeof q);
  return ((q[0] + q[4]) + (q[2] + q[6])) + ((q[1] + q[5]) + (q[3] + q[7]));
}
#endif

/* g_k = p_k (theta_k + alpha); returns sum_k g_k. */
CVB0_TARGET static inline double CVB0_FN(cvb0_gamma)(int K, const double *restrict p,
                                                    const double *restrict th,
                                                    double alpha, double *restrict g) {
  int k = 0;
  double s;
#if CVB0_VW > 0
  const CVB0_V al = CVB0_FN(vsplat)(alpha);
  CVB0_V acc[CVB0_NACC];
  for (int j = 0; j < CVB0_NACC; j++) acc[j] = CVB0_FN(vsplat)(0.0);
  for (; k + 8 <= K; k += 8) {
#pragma GCC unroll 4
    for (int j = 0; j < CVB0_NACC; j++) {
      const int o = k + j * CVB0_VW;
      CVB0_V gj = CVB0_FN(vload)(p + o) * (CVB0_FN(vload)(th + o) + al);
      CVB0_FN(vstore)(g + o, gj);
      acc[j] += gj;
    }
  }
  s = CVB0_FN(vreduce)(acc);
#else
  double q[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (; k + 8 <= K; k += 8) {
    for (int j = 0; j < 8; j++) {
      g[k + j] = p[k + j] * (th[k + j] + alpha);
      q[j] += g[k + j];
    }
  }
  s = ((q[0] + q[4]) + (q[2] + q[6])) + ((q[1] + q[5]) + (q[3] + q[7]));
#endif
  for (; k < K; k++) {
    g[k] = p[k] * (th[k] + alpha);
    s += g[k];
  }
  return s;
}

/* theta <- decay theta + c g, then the next word's g from the new theta;
 * returns the next word's sum_k g_k. */
CVB0_TARGET static inline double CVB0_FN(cvb0_step_gamma)(int K, const double *restrict pn,
                                                         double *restrict th,
                                                         double decay, double c,
                                                         double alpha,
                                                         double *restrict g) {
  int k = 0;
  double s;
#if CVB0_VW > 0
  const CVB0_V al = CVB0_FN(vsplat)(alpha), de = CVB0_FN(vsplat)(decay),
               cc = CVB0_FN(vsplat)(c);
  CVB0_V acc[CVB0_NACC];
  for (int j = 0; j < CVB0_NACC; j++) acc[j] = CVB0_FN(vsplat)(0.0);
  for (; k + 8 <= K; k += 8) {
#pragma GCC unroll 4
    for (int j = 0; j < CVB0_NACC; j++) {
      const int o = k + j * CVB0_VW;
      CVB0_V t0 = de * CVB0_FN(vload)(th + o) + cc * CVB0_FN(vload)(g + o);
      CVB0_FN(vstore)(th + o, t0);
      CVB0_V gj = CVB0_FN(vload)(pn + o) * (t0 + al);
      CVB0_FN(vstore)(g + o, gj);
      acc[j] += gj;
    }
  }
  s = CVB0_FN(vreduce)(acc);
#else
  double q[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (; k + 8 <= K; k += 8) {
    for (int j = 0; j < 8; j++) {
      double t0 = decay * th[k + j] + c * g[k + j];
      th[k + j] = t0;
      g[k + j] = pn[k + j] * (t0 + alpha);
      q[j] += g[k + j];
    }
  }
  s = ((q[0] + q[4]) + (q[2] + q[6])) + ((q[1] + q[5]) + (q[3] + q[7]));
#endif
  for (; k < K; k++) {
    double t0 = decay * th[k] + c * g[k];
    th[k] = t0;
    g[k] = pn[k] * (t0 + alpha);
    s += g[k];
  }
  return s;
}

/* a = w g, and dst += a (separate loops: adding here or later from a buffer
 * gives the same bits). */
CVB0_TARGET static inline void CVB0_FN(cvb0_scale)(int K, double w,
                                                  const double *restrict g,
                                                  double *restrict a) {
  int k = 0;
#if CVB0_VW > 0
  const CVB0_V ww = CVB0_FN(vsplat)(w);
  for (; k + CVB0_VW <= K; k += CVB0_VW)
    CVB0_FN(vstore)(a + k, ww * CVB0_FN(vload)(g + k));
#endif
  for (; k < K; k++) a[k] = w * g[k];
}
/* dst = w g + 0, the first term of a summary column: the one-thread order
 * starts each column at 0 and adds, and 0 + a is a (for a = -0, +0). */
CVB0_TARGET static inline void CVB0_FN(cvb0_scale_first)(int K, double w,
                                                        const double *restrict g,
                                                        double *restrict a) {
  int k = 0;
#if CVB0_VW > 0
  const CVB0_V ww = CVB0_FN(vsplat)(w), z = CVB0_FN(vsplat)(0.0);
  for (; k + CVB0_VW <= K; k += CVB0_VW)
    CVB0_FN(vstore)(a + k, z + ww * CVB0_FN(vload)(g + k));
#endif
  for (; k < K; k++) a[k] = 0.0 + w * g[k];
}
CVB0_TARGET static inline void CVB0_FN(cvb0_add)(int K, const double *restrict a,
                                                double *restrict dst) {
  int k = 0;
#if CVB0_VW > 0
  for (; k + CVB0_VW <= K; k += CVB0_VW)
    CVB0_FN(vstore)(dst + k, CVB0_FN(vload)(dst + k) + CVB0_FN(vload)(a + k));
#endif
  for (; k < K; k++) dst[k] += a[k];
}

/* dst += w p. */
CVB0_TARGET static inline void CVB0_FN(cvb0_axpy)(int K, double w, const double *restrict p,
                                                 double *restrict dst) {
  int k = 0;
#if CVB0_VW > 0
  const CVB0_V ww = CVB0_FN(vsplat)(w);
  for (; k + CVB0_VW <= K; k += CVB0_VW)
    CVB0_FN(vstore)(dst + k, CVB0_FN(vload)(dst + k) + ww * CVB0_FN(vload)(p + k));
#endif
  for (; k < K; k++) dst[k] += w * p[k];
}

/* The scans of cvb0_top() over the K responsibilities, in vectors: the
 * largest g_k (at least 0), the number of g_k >= t, and the topics with
 * g_k >= t in increasing k (to sel; the return value is their number),
 * whose vectors are skipped whole when no lane passes. Comparisons and a
 * maximum only: every width gives what the scalar loops give. */
CVB0_TARGET static inline double CVB0_FN(cvb0_gmax)(int K, const double *restrict g) {
  double m = 0.0;
  int k = 0;
#if CVB0_VW > 0
  CVB0_V mv = CVB0_FN(vsplat)(0.0);
  for (; k + CVB0_VW <= K; k += CVB0_VW) {
    const CVB0_V a = CVB0_FN(vload)(g + k);
    const CVB0_IV gt = (CVB0_IV)(a > mv);
    mv = (CVB0_V)(((CVB0_IV)a & gt) | ((CVB0_IV)mv & ~gt));
  }
  for (int l = 0; l < CVB0_VW; l++) m = mv[l] > m ? mv[l] : m;
#endif
  for (; k < K; k++) m = g[k] > m ? g[k] : m;
  return m;
}
CVB0_TARGET static inline int CVB0_FN(cvb0_count_ge)(int K, const double *restrict g,
                                                     double t) {
  long long c = 0;
  int k = 0;
#if CVB0_VW > 0
  const CVB0_V tv = CVB0_FN(vsplat)(t);
  CVB0_IV acc = (CVB0_IV)CVB0_FN(vsplat)(0.0);
  for (; k + CVB0_VW <= K; k += CVB0_VW) acc -= (CVB0_IV)(CVB0_FN(vload)(g + k) >= tv);
  for (int l = 0; l < CVB0_VW; l++) c += acc[l];
#endif
  for (; k < K; k++) c += g[k] >= t;
  return (int)c;
}
CVB0_TARGET static inline int CVB0_FN(cvb0_gather_ge)(int K, const double *restrict g,
                                                      double t, int *restrict sel) {
  int n = 0, k = 0;
#if CVB0_VW > 0
  const CVB0_V tv = CVB0_FN(vsplat)(t);
  for (; k + CVB0_VW <= K; k += CVB0_VW) {
    const CVB0_IV m = (CVB0_IV)(CVB0_FN(vload)(g + k) >= tv);
    long long any = 0;
    for (int l = 0; l < CVB0_VW; l++) any |= m[l];
    if (!any) continue;
    for (int l = 0; l < CVB0_VW; l++)
      if (g[k + l] >= t) sel[n++] = k + l;
  }
#endif
  for (; k < K; k++)
    if (g[k] >= t) sel[n++] = k;
  return n;
}

/* The sparse part of one entry's m gamma (cs->top_L = L < K), to
 * tk, tv (its L slots), gamma_k = g_k / s:
 * - rest = 0: its L largest responsibilities (larger first, the lower topic
 *   first among equal values), renormalised over them, m g_k / (their sum
 *   of g), so the entry still adds its whole count m;
 * - rest = 1: its L - 1 largest exactly, m g_k / s, and the rest of its
 *   mass, m (sum of the other g) / s, on one of the other topics, drawn
 *   with probability g_j / (their sum) from the uniform u: the expected
 *   contribution is m gamma itself (unbiased; a sampled form as in Mimno,
 *   Hoffman and Blei 2012).
 * A zero count gives topics -1 (nothing to add). Scalar code but for the
 * scans over K (comparisons only): every width gives the same bits. ix (L
 * ints), gv (L doubles) and flag (K ints, all 0, left so) are scratch. */
CVB0_TARGET __attribute__((noinline)) static void CVB0_FN(cvb0_top)(int K, int L, int rest, double m, double s,
                                                double u, const double *restrict g,
                                                int *restrict ix, double *restrict gv,
                                                int *restrict flag, int *restrict tk,
                                                double *restrict tv) {
  if (m == 0.0) {
    for (int l = 0; l < L; l++) {
      tk[l] = -1;
      tv[l] = 0.0;
    }
    return;
  }
  const int T = rest ? L - 1 : L;
  if (T > 0) {
    /* the candidates: the topics with g_k >= thr for a threshold that
     * leaves at least T of them (then the T largest are among them: every
     * other value is below each) and, found by halving the interval, at
     * most 4 T when a few halvings reach that; gathered in increasing k
     * (cvb0_gather_ge(), in flag, left all 0), so the insertion below keeps
     * the lower topic first among equal values, as over all K */
    double lo = 0.0, hi = CVB0_FN(cvb0_gmax)(K, g);
    for (int it = 0; it < 8; it++) {
      const double mid = lo == 0.0 ? hi * 0.0625 : 0.5 * (lo + hi);
      const int c = CVB0_FN(cvb0_count_ge)(K, g, mid);
      if (c < T) {
        hi = mid;
      } else {
        lo = mid;
        if (c <= 4 * T) break;
      }
    }
    const int nc = CVB0_FN(cvb0_gather_ge)(K, g, lo, flag);
    int n = 0;
    for (int c = 0; c < nc; c++) {
      const int k = flag[c];
      const double v = g[k];
      if (n == T && !(v > gv[T - 1])) continue;
      int j = n < T ? n++ : T - 1;
      while (j > 0 && v > gv[j - 1]) {
        gv[j] = gv[j - 1];
        ix[j] = ix[j - 1];
        j--;
      }
      gv[j] = v;
      ix[j] = k;
    }
    /* (the gathering wrote flag[0 .. nc)) */
    for (int c = 0; c < nc; c++) flag[c] = 0;
  }
  if (!rest) {
    double sl = 0.0;
    for (int l = 0; l < L; l++) sl += gv[l];
    const double w = sl > 0.0 ? m / sl : 0.0;
    for (int l = 0; l < L; l++) {
      tk[l] = ix[l];
      tv[l] = w * gv[l];
    }
    return;
  }
  const double w = m / s;
  for (int l = 0; l < T; l++) {
    tk[l] = ix[l];
    tv[l] = w * gv[l];
    flag[ix[l]] = 1;
  }
  double rs = 0.0;
  for (int k = 0; k < K; k++)
    if (!flag[k]) rs += g[k];
  int pick = -1;
  if (rs > 0.0) {
    const double target = u * rs;
    double c = 0.0;
    for (int k = 0; k < K; k++) {
      if (flag[k] || !(g[k] > 0.0)) continue;
      pick = k;
      c += g[k];
      if (c > target) break;
    }
  }
  for (int l = 0; l < T; l++) flag[ix[l]] = 0;
  tk[T] = pick;
  tv[T] = pick >= 0 ? w * rs : 0.0;
}

/* The shape form (cs->top_rest = 2) of one entry's m gamma, gamma_k =
 * g_k / s, outside a full column (cvb0_doc() adds a full column's entries
 * whole): p is the word's topic column (P's, normalised over k here); its
 * L largest responsibilities (as cvb0_top(); the lower topic first among
 * equal values) go to tk, tv with values m g_k / s - c p_k, and its tail
 * weight c = m (1 - their g / s) / (1 - their p) to tc: the rest of its count
 *   goes to the other topics in proportion to p, which is what it would
 *   be if the document's topic counts were equal across those topics (they
 *   are mostly near 0 there). The summary's column is then c p plus the
 *   values, summed over its entries: the consumer (cvb0_shape_columns())
 *   adds the column's sum of c times the word's column at the global step.
 * A zero count gives topics -1 and c = 0; when the L topics hold all of p
 * (c undefined) their values are m g_k / (their g), the whole count (as
 * cvb0_top() leaves them). Plain scalar code; ix (L ints), gv (L doubles)
 * and flag (K ints, all 0) as cvb0_top(). */
CVB0_TARGET __attribute__((noinline)) static void CVB0_FN(cvb0_shape)(
    int K, int L, double m, double s, const double *restrict g,
    const double *restrict p, int *restrict ix, double *restrict gv, int *restrict flag,
    int *restrict tk, double *restrict tv, double *restrict tc) {
  *tc = 0.0;
  /* the L largest g (the lower topic first among equal values) */
  CVB0_FN(cvb0_top)(K, L, 0, m, s, 0.0, g, ix, gv, flag, tk, tv);
  if (m == 0.0) return;
  double sp = 0.0, sg = 0.0, q = 0.0;
  for (int k = 0; k < K; k++) sp += p[k];
  for (int l = 0; l < L; l++) {
    sg += g[tk[l]];
    q += p[tk[l]];
  }
  if (!(sp > 0.0) || !(sg > 0.0)) return;
  q /= sp;
  const double rest = m * (1.0 - sg / s);
  const double c = (1.0 - q > 1e-12 && rest > 0.0) ? rest / (1.0 - q) : 0.0;
  const double mt = c > 0.0 ? m / s : m / sg, cp = c / sp;
  for (int l = 0; l < L; l++) tv[l] = mt * g[tk[l]] - cp * p[tk[l]];
  *tc = c;
}

/* One document. P is K x U: P[u K + k] = lambda_kv / tot_k for the word v
 * of column u; ecol[e] is the column of the word of entry e of the batch.
 * theta (K) receives NTheta_d; g (K) and order (n_d) are scratch. The last
 * pass gives m gamma of each of the document's words to the summary:
 * - with dest not NULL (the batch's entries, cvb0_summary_plan()), entry e
 *   of this document writes it to column u = dest[e] / 2 of sum when
 *   dest[e] = 2 u (the word's first entry in the batch: 0 + m gamma, as
 *   the one-thread order starts), adds it there when dest[e] = 2 u + 1 (a
 *   later entry in the same range of documents, which one thread runs in
 *   order), else writes it to slot -dest[e] - 1 of extra (K each), which
 *   cvb0_local() later adds to the column in document order;
 * - else, with sum not NULL (one thread, documents in order), it adds m
 *   gamma to the word's column of sum through g2 (K scratch).
 * Both give the same bits.
 * With cs->top_L = L < K and sp not NULL, the last pass instead keeps each
 * entry's L largest responsibilities (cvb0_top(), or cvb0_shape() for the
 * shape form: topics and values at sp->tk, sp->tv + sp->eoff[e] for the
 * batch's entry e; a full column of the shape form on one thread adds to
 * sp->fullacc instead), for the sparse summary cvb0_local() builds from
 * them; g2 (K doubles) and il (L + K ints, the last K all 0) are then its
 * scratch. */
CVB0_TARGET static void CVB0_FN(cvb0_doc)(const svi_dtm *x, int d, const double *P,
                                         const int *ecol, const cvb0_settings *cs,
                                         const double *rho, const double *log1m,
                                         svi_rng *r, double *theta, double *g,
                                         double *g2, int *order, const int *dest,
                                         double *extra, double *sum, const cvb0_sparse *sp,
                                         int *il) {
  const int K = cs->K;
  const double alpha = cs->alpha;
  const int start = x->doc_ptr[d], n = x->doc_ptr[d + 1] - start;
  const int *col = ecol + start;
  const double *cnt = x->count + start;
  double Nd = 0.0;
  for (int j = 0; j < n; j++) Nd += cnt[j];
  if (n == 0 || Nd <= 0.0) {
    for (int k = 0; k < K; k++) theta[k] = 0.0;
    if (sp) {
      for (svi_len e = sp->eoff[start]; e < sp->eoff[start + n]; e++) {
        sp->tk[e] = -1;
        sp->tv[e] = 0.0;
      }
      if (sp->tc)
        for (int j = 0; j < n; j++) sp->tc[start + j] = 0.0;
    } else if (dest) {
      /* nothing to add: a first entry's column starts at 0, a slot is 0 */
      for (int j = 0; j < n; j++) {
        const int slot = dest[start + j];
        if (slot >= 0 && (slot & 1)) continue;
        double *a = slot >= 0 ? sum + (svi_len)(slot >> 1) * K : extra + (svi_len)(-slot - 1) * K;
        memset(a, 0, sizeof(double) * (size_t)K);
      }
    }
    return;
  }
  if (cs->doc_start == 1) {
    /* the topics' responsibilities of the document's words, each word's
     * lambda_kv / tot_k normalised over k (P's columns sum to 1 for this
     * start: cvb0_topic_columns()), weighted by its count */
    for (int k = 0; k < K; k++) theta[k] = 0.0;
    for (int j = 0; j < n; j++) CVB0_FN(cvb0_axpy)(K, cnt[j], P + (svi_len)col[j] * K, theta);
  } else if (cs->doc_start == 2) {
    /* uniform */
    for (int k = 0; k < K; k++) theta[k] = Nd / (double)K;
  } else {
    /* random start */
    double su = 0.0;
    for (int k = 0; k < K; k++) {
      theta[k] = svi_rng_unif(r);
      su += theta[k];
    }
    const double sc = Nd / su;
    for (int k = 0; k < K; k++) theta[k] *= sc;
  }

  /* the background topic (topic 0) has prior alpha + background N_d in
   * this document: its responsibility gains p_0 background N_d */
  const double bg = cs->background * Nd;
  int t = 0;
  for (int pass = 0; pass < cs->passes; pass++) {
    const int last = (pass == cs->passes - 1);
    for (int j = 0; j < n; j++) order[j] = j;
    if (cs->shuffle) {
      for (int i = n - 1; i >= 1; i--) {
        int jj = (int)(svi_rng_unif(r) * (double)(i + 1));
        if (jj > i) jj = i;
        int tmp = order[i];
        order[i] = order[jj];
        order[jj] = tmp;
      }
    }
    double s = CVB0_FN(cvb0_gamma)(K, P + (svi_len)col[order[0]] * K, theta,
                                   alpha, g);
    if (bg > 0.0) {
      const double e = P[(svi_len)col[order[0]] * K] * bg;
      g[0] += e;
      s += e;
    }
    for (int jo = 0; jo < n; jo++) {
      const int j = order[jo];
      const double m = cnt[j];
      const double decay = (m == 1.0) ? 1.0 - rho[t] : exp(m * log1m[t]);
      t++;
      const double c = Nd * (1.0 - decay) / s;
      if (last && sp) {
        const svi_len o = sp->eoff[start + j];
        if (sp->full && sp->full[col[j]]) {
          /* a full column of the shape form (the word has K / L entries or
           * more in the batch, so its column holds K topics anyway): the
           * whole m gamma, added to the column now on one thread (documents
           * in order), else kept in the entry's K slots; the same products
           * and sums either way */
          sp->tc[start + j] = 0.0;
          if (sp->fullacc) {
            CVB0_FN(cvb0_scale)(K, m / s, g, g2);
            CVB0_FN(cvb0_add)(K, g2, sp->fullacc + (svi_len)col[j] * K);
          } else {
            CVB0_FN(cvb0_scale)(K, m / s, g, sp->tv + o);
            for (int k = 0; k < K; k++) sp->tk[o + k] = k;
          }
        } else if (cs->top_rest == 2) {
          CVB0_FN(cvb0_shape)(K, cs->top_L, m, s, g, P + (svi_len)col[j] * K, il, g2,
                              il + cs->top_L, sp->tk + o, sp->tv + o, sp->tc + start + j);
        } else {
          /* (the sampled form draws one uniform per entry of positive count
           * in the last pass, in visiting order) */
          const double u = (cs->top_rest == 1 && m != 0.0) ? svi_rng_unif(r) : 0.0;
          CVB0_FN(cvb0_top)(K, cs->top_L, cs->top_rest, m, s, u, g, il, g2, il + cs->top_L,
                            sp->tk + o, sp->tv + o);
        }
      } else if (last && dest) {
        const int slot = dest[start + j];
        if (slot < 0) {
          CVB0_FN(cvb0_scale)(K, m / s, g, extra + (svi_len)(-slot - 1) * K);
        } else if (slot & 1) {
          CVB0_FN(cvb0_scale)(K, m / s, g, g2);
          CVB0_FN(cvb0_add)(K, g2, sum + (svi_len)(slot >> 1) * K);
        } else {
          CVB0_FN(cvb0_scale_first)(K, m / s, g, sum + (svi_len)(slot >> 1) * K);
        }
      } else if (last && sum) {
        CVB0_FN(cvb0_scale)(K, m / s, g, g2);
        CVB0_FN(cvb0_add)(K, g2, sum + (svi_len)col[j] * K);
      }
      if (jo + 1 < n) {
        const double *pn = P + (svi_len)col[order[jo + 1]] * K;
        s = CVB0_FN(cvb0_step_gamma)(K, pn, theta, decay, c, alpha, g);
        if (bg > 0.0) {
          const double e = pn[0] * bg;
          g[0] += e;
          s += e;
        }
      } else {
        for (int k = 0; k < K; k++) theta[k] = decay * theta[k] + c * g[k];
      }
    }
  }
}

#undef CVB0_V
#undef CVB0_IV
#undef CVB0_NACC
#undef CVB0_FN
#undef CVB0_CAT
#undef CVB0_CAT2
