/* Source: netzbasis/openbsd-src@4e6ac999902cada19196d97d1183f40ec7281558:sys/netinet/ip_ah.h (OpenBSD 6.1) */

#define	AHCTL_ENABLE	1		/* Enable AH processing */
#define	AHCTL_STATS	2		/* AH stats */
#define	AHCTL_MAXID	3

#define AHCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT } \
}
