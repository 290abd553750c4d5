/* Reference cost of the two-link RK4 step in plain C (benchmark only; not part of
 * the package). Same equations as twolink_gym.dynamics._accelerations and the
 * same RK4 as twolink_gym.integrators.rk4_components, on N independent states
 * stored as structure-of-arrays. bench_speed.py compiles it with gcc -O2, checks
 * its result against the Python implementation, and times it.
 *
 * usage: rk4_ref N STEPS SUBSTEPS DT a b d g1 g2 f1 f2
 * prints: seconds, then q1 q2 dq1 dq2 of state 0 after the run (%.17g)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { double a, b, d, g1, g2, f1, f2; } coef;

static void acc(const coef *k, double q1, double q2, double dq1, double dq2,
                double t1, double t2, double *a1, double *a2) {
    double c2 = cos(q2), h = -k->b * sin(q2), c12 = cos(q1 + q2);
    double m11 = k->a + 2.0 * k->b * c2, m12 = k->d + k->b * c2, m22 = k->d;
    double r1 = t1 - h * (2.0 * dq1 * dq2 + dq2 * dq2) - k->g1 * cos(q1) - k->g2 * c12 - k->f1 * dq1;
    double r2 = t2 + h * dq1 * dq1 - k->g2 * c12 - k->f2 * dq2;
    double det = m11 * m22 - m12 * m12;
    *a1 = (m22 * r1 - m12 * r2) / det;
    *a2 = (m11 * r2 - m12 * r1) / det;
}

int main(int argc, char **argv) {
    if (argc != 12) { fprintf(stderr, "usage: rk4_ref N STEPS SUBSTEPS DT a b d g1 g2 f1 f2\n"); return 2; }
    long n = atol(argv[1]), steps = atol(argv[2]); int sub = atoi(argv[3]);
    double dt = atof(argv[4]);
    coef k = {atof(argv[5]), atof(argv[6]), atof(argv[7]), atof(argv[8]), atof(argv[9]), atof(argv[10]), atof(argv[11])};
    double *x = malloc(sizeof(double) * 6 * n);
    double *q1 = x, *q2 = x + n, *w1 = x + 2 * n, *w2 = x + 3 * n, *u1 = x + 4 * n, *u2 = x + 5 * n;
    for (long i = 0; i < n; i++) {  /* deterministic spread of states and torques */
        q1[i] = 0.3 + 1e-4 * i; q2[i] = -0.5 + 2e-4 * i; w1[i] = 0.0; w2[i] = 0.0;
        u1[i] = 1.0; u2[i] = -0.5;
    }
    double h = dt / sub, half = 0.5 * h, sixth = h / 6.0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long s = 0; s < steps; s++) {
        for (long i = 0; i < n; i++) {
            double p1 = q1[i], p2 = q2[i], d1 = w1[i], d2 = w2[i];
            for (int j = 0; j < sub; j++) {
                double a1, b1, a2, b2, a3, b3, a4, b4;
                acc(&k, p1, p2, d1, d2, u1[i], u2[i], &a1, &b1);
                double v1 = d1 + half * a1, x1 = d2 + half * b1;
                acc(&k, p1 + half * d1, p2 + half * d2, v1, x1, u1[i], u2[i], &a2, &b2);
                double v2 = d1 + half * a2, x2 = d2 + half * b2;
                acc(&k, p1 + half * v1, p2 + half * x1, v2, x2, u1[i], u2[i], &a3, &b3);
                double v3 = d1 + h * a3, x3 = d2 + h * b3;
                acc(&k, p1 + h * v2, p2 + h * x2, v3, x3, u1[i], u2[i], &a4, &b4);
                p1 = p1 + sixth * (d1 + 2.0 * (v1 + v2) + v3);
                p2 = p2 + sixth * (d2 + 2.0 * (x1 + x2) + x3);
                d1 = d1 + sixth * (a1 + 2.0 * (a2 + a3) + a4);
                d2 = d2 + sixth * (b1 + 2.0 * (b2 + b3) + b4);
            }
            q1[i] = p1; q2[i] = p2; w1[i] = d1; w2[i] = d2;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.9f\n%.17g %.17g %.17g %.17g\n",
           (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), q1[0], q2[0], w1[0], w2[0]);
    free(x);
    return 0;
}
