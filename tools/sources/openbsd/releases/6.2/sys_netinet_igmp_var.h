/* Source: netzbasis/openbsd-src@72ff345029cd271fe7ea8090aff7a89d1d32a7af:sys/netinet/igmp_var.h (OpenBSD 6.2) */

#define IGMPCTL_STATS		1	/* IGMP statistics */
#define IGMPCTL_MAXID		2

#define IGMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats",	CTLTYPE_STRUCT } \
}
