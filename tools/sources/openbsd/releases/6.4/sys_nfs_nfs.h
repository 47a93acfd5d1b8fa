/* Source: netzbasis/openbsd-src@dc525184cbba8f0bb3f0a2d572fa2b0f3f1fdfe5:sys/nfs/nfs.h (OpenBSD 6.4) */

#define	NFS_NFSSTATS	1	/* struct: struct nfsstats */
#define	NFS_NIOTHREADS	2	/* number of i/o threads */
#define	NFS_MAXID	3

#define FS_NFS_NAMES { \
			{ 0, 0 }, \
			{ "nfsstats", CTLTYPE_STRUCT }, \
			{ "iothreads", CTLTYPE_INT } \
}
