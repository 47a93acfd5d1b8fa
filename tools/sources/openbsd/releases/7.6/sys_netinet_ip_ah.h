/* Source: Passw/SecBSD-src@569ffd723ab6b7eb5bff163849bc36705adea19b:sys/netinet/ip_ah.h (OpenBSD 7.6 release-period tree via DERIVATIVE SecBSD 1.6; newvers.sh has $OpenBSD: newvers.sh,v 1.205 2024/09/17$, ost="SecBSD" osr="1.6" STATUS "") */

#define	AHCTL_ENABLE	1		/* Enable AH processing */
#define	AHCTL_STATS	2		/* AH stats */
#define	AHCTL_MAXID	3

#define AHCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT } \
}
