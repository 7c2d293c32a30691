"""The array through which libgomp's workers name their threads to TEIR's launchers:
its symbol and size, shared by the launchers that read and write it
(`teir_lowering.codegen.gomp_launch`) and the runtime that defines it
(`teir_lowering.runtime.jit.load_libgomp`). A module of its own, importing
nothing, so that a kernel loaded from the disk cache does not import the code
generators."""

TEAM = "__teir_team"
"""The thread ids of libgomp's workers: slot i holds thread number i's, an array of
TEAM_SLOTS i64 in the runtime (`runtime.jit.load_libgomp` defines the symbol). A
worker writes its own at each fork (`codegen.gomp_launch._define_placement`); the
launcher reads them to place the workers before it wakes them
(`codegen.gomp_launch._define_pinning`)."""

TEAM_SLOTS = 256
"""Workers the launcher places; thread numbers past them are left alone."""
