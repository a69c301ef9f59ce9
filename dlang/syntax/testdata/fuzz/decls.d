typedef struct foo {
	int a : 3;
	char *b[4];
	union { long l; short s; } u;
} foo_t;
enum color { RED, GREEN = 2, BLUE };
inline int LIMIT = 10 * sizeof (foo_t);
self int x[string, int];
int (*fp)(int, ...);
translator foo_t < struct task_struct *T > { a = T->pid; b = 0; };
provider test { probe start(char *, int) : (string, int); };
