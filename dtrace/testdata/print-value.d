/*
 * print() of values that are not pointers, in illumos's layout; the
 * struct is illumos's print/tst.anon.c's, whose anonymous members are
 * found by name and printed as "struct  {".
 */
#pragma D option quiet

struct elves {
	int feanor;
	struct {
		int fingolfin;
	};
	union {
		int maedhros;
		int fingon;
		struct {
			int aredhel;
			union {
				int turgon;
				struct {
					int tuor;
					int idril;
					struct {
						union {
							int earendil;
							int elwing;
						};
						int silmaril;
					};
				};
				union {
					int maeglin;
					int morgoth;
					union {
						int balrog;
						int gondolin;
						int glorfindel;
						int ecthelion;
					};
				};
			};
		};
	};
	struct {
		int elrond;
		int elros;
	};
};

enum hue { RED, GREEN = 5 };

struct mixed {
	char c;
	unsigned int lo : 3, hi : 5;
	enum hue h;
	short arr[3];
	char name[8];
	void *p;
	struct { int x; } pts[2];
};

BEGIN
{
	e = (struct elves *)alloca(sizeof (struct elves));
	e->feanor = 0x1497;
	e->fingolfin = 0x467;
	e->maedhros = 0x587;
	e->turgon = 0x510;
	e->idril = 0x525;
	e->earendil = 0x7777;
	e->silmaril = 0x9999;
	e->elrond = 0x3021;
	e->elros = 0x442;
	print(*e);
	printf("\n");
	print(e->turgon);
	print(e->balrog);
	print(e->elrond);
	print(e->silmaril);
	printf("%d %d %d %d\n", e->fingon, e->tuor, e->elwing, e->glorfindel);
	printf("%d %d\n", sizeof (struct elves), offsetof(struct elves, elros));

	print(1 + 2);
	print("foo");
	print((char)'A');
	print((char)0);
	print((char)10);
	print(-1);
	print((uint8_t)0);
	print(GREEN);

	m = (struct mixed *)alloca(sizeof (struct mixed));
	m->c = 'z';
	m->lo = 5;
	m->hi = 17;
	m->h = GREEN;
	m->arr[1] = 7;
	m->name[0] = 'h';
	m->name[1] = 'i';
	m->p = (void *)0xfeedface;
	m->pts[1].x = 3;
	print(*m);
	printf("\n");
	print(m->arr);
	print(m->name);
	exit(0);
}
