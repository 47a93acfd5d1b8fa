/* Source: netzbasis/openbsd-src@bda9423adea36d456667626b097beded37e4751a:sys/netinet/igmp_var.h (OpenBSD 6.3) */

#define IGMPCTL_STATS		1	/* IGMP statistics */
#define IGMPCTL_MAXID		2

#define IGMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats",	CTLTYPE_STRUCT } \
}
