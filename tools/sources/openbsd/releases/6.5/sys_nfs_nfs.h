/* Source: netzbasis/openbsd-src@e0deaa949402a40060d86289184fa9d67af00880:sys/nfs/nfs.h (OpenBSD 6.5) */

#define	NFS_NFSSTATS	1	/* struct: struct nfsstats */
#define	NFS_NIOTHREADS	2	/* number of i/o threads */
#define	NFS_MAXID	3

#define FS_NFS_NAMES { \
			{ 0, 0 }, \
			{ "nfsstats", CTLTYPE_STRUCT }, \
			{ "iothreads", CTLTYPE_INT } \
}
