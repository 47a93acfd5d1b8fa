/* Source: netzbasis/openbsd-src@bda9423adea36d456667626b097beded37e4751a:sys/netinet/ip_divert.h (OpenBSD 6.3) */

#define	DIVERTCTL_RECVSPACE	1	/* receive buffer space */
#define	DIVERTCTL_SENDSPACE	2	/* send buffer space */
#define	DIVERTCTL_STATS		3	/* divert statistics */
#define	DIVERTCTL_MAXID		4

#define	DIVERTCTL_NAMES { \
	{ 0, 0 }, \
	{ "recvspace",	CTLTYPE_INT }, \
	{ "sendspace",	CTLTYPE_INT }, \
	{ "stats",	CTLTYPE_STRUCT } \
}
