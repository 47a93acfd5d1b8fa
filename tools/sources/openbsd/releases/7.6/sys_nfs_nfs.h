/* Source: Passw/SecBSD-src@569ffd723ab6b7eb5bff163849bc36705adea19b:sys/nfs/nfs.h (OpenBSD 7.6 release-period tree via DERIVATIVE SecBSD 1.6; newvers.sh has $OpenBSD: newvers.sh,v 1.205 2024/09/17$, ost="SecBSD" osr="1.6" STATUS "") */

#define	NFS_NFSSTATS	1	/* struct: struct nfsstats */
#define	NFS_NIOTHREADS	2	/* number of i/o threads */
#define	NFS_MAXID	3

#define FS_NFS_NAMES { \
			{ 0, 0 }, \
			{ "nfsstats", CTLTYPE_STRUCT }, \
			{ "iothreads", CTLTYPE_INT } \
}
