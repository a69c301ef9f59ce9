/*
 * Trigger for the ustack tests: a chain of 62 named functions, main ->
 * myfunc_0 -> ... -> myfunc_9 -> myfunc_A -> ... -> myfunc_Z -> myfunc_a ->
 * ... -> myfunc_z, where the last one spins forever so that profile and pid
 * probes catch a deep, known user stack. Each link uses its callee's result
 * so that the compiler keeps every frame (no tail calls).
 */

int mycallee(int v) { return v ^ 1; }

int myfunc_z(void)
{
	volatile int v = mycallee(1);	/* not a leaf function */

	for (;;)
		v = 2 * v - 1;		/* profile probes fire here */
	return v;
}

#define LINK(me, next) int next(void); int me(void) { return next() ^ 1; }

LINK(myfunc_y, myfunc_z) LINK(myfunc_x, myfunc_y) LINK(myfunc_w, myfunc_x)
LINK(myfunc_v, myfunc_w) LINK(myfunc_u, myfunc_v) LINK(myfunc_t, myfunc_u)
LINK(myfunc_s, myfunc_t) LINK(myfunc_r, myfunc_s) LINK(myfunc_q, myfunc_r)
LINK(myfunc_p, myfunc_q) LINK(myfunc_o, myfunc_p) LINK(myfunc_n, myfunc_o)
LINK(myfunc_m, myfunc_n) LINK(myfunc_l, myfunc_m) LINK(myfunc_k, myfunc_l)
LINK(myfunc_j, myfunc_k) LINK(myfunc_i, myfunc_j) LINK(myfunc_h, myfunc_i)
LINK(myfunc_g, myfunc_h) LINK(myfunc_f, myfunc_g) LINK(myfunc_e, myfunc_f)
LINK(myfunc_d, myfunc_e) LINK(myfunc_c, myfunc_d) LINK(myfunc_b, myfunc_c)
LINK(myfunc_a, myfunc_b) LINK(myfunc_Z, myfunc_a) LINK(myfunc_Y, myfunc_Z)
LINK(myfunc_X, myfunc_Y) LINK(myfunc_W, myfunc_X) LINK(myfunc_V, myfunc_W)
LINK(myfunc_U, myfunc_V) LINK(myfunc_T, myfunc_U) LINK(myfunc_S, myfunc_T)
LINK(myfunc_R, myfunc_S) LINK(myfunc_Q, myfunc_R) LINK(myfunc_P, myfunc_Q)
LINK(myfunc_O, myfunc_P) LINK(myfunc_N, myfunc_O) LINK(myfunc_M, myfunc_N)
LINK(myfunc_L, myfunc_M) LINK(myfunc_K, myfunc_L) LINK(myfunc_J, myfunc_K)
LINK(myfunc_I, myfunc_J) LINK(myfunc_H, myfunc_I) LINK(myfunc_G, myfunc_H)
LINK(myfunc_F, myfunc_G) LINK(myfunc_E, myfunc_F) LINK(myfunc_D, myfunc_E)
LINK(myfunc_C, myfunc_D) LINK(myfunc_B, myfunc_C) LINK(myfunc_A, myfunc_B)
LINK(myfunc_9, myfunc_A) LINK(myfunc_8, myfunc_9) LINK(myfunc_7, myfunc_8)
LINK(myfunc_6, myfunc_7) LINK(myfunc_5, myfunc_6) LINK(myfunc_4, myfunc_5)
LINK(myfunc_3, myfunc_4) LINK(myfunc_2, myfunc_3) LINK(myfunc_1, myfunc_2)
LINK(myfunc_0, myfunc_1)

int main(void)
{
	return myfunc_0() ^ 1;
}
