#!/usr/bin/env python3
"""Generate Plexus's Fortran bindings from the C prototypes in include/mpi.h.

Run at build time (bindings/fortran/CMakeLists.txt), so C and Fortran cannot
drift: a function declared in mpi.h gets its Fortran binding at the next build.

Inputs: mpi.h (every `int MPI_X(...)` prototype and every integer #define)
and the rules below, which say what C cannot: which int arguments are
Fortran LOGICALs, which void * arguments are addresses rather than buffers,
which callbacks can be handed straight to the library, what to skip.

Outputs (into --out):
  mpif.h          constants, sentinel common blocks, function types; usable
                  from fixed and free form (72 columns, '!' comments)
  mpi.f90         the `mpi` module: the same constants plus an explicit
                  interface for every subroutine (choice buffers unchecked)
  mpi_f08.f90     the `mpi_f08` module: TYPE(MPI_Comm) etc., TYPE(MPI_Status),
                  optional IERROR; each procedure calls the C glue through a
                  BIND(C) interface
  mpi_fortran.c   the glue: mpi_send_ (gfortran), mpi_send__, mpi_send,
                  MPI_SEND and the pmpi_ twins, converting Fortran arguments
                  (by reference, hidden CHARACTER lengths, LOGICAL, sentinels)
                  into a call of the C function
  skipped.txt     the functions left out, and why

Argument conventions of the glue (gfortran, x86-64): every argument by
reference; one size_t length per CHARACTER argument appended after IERROR in
order; LOGICAL is a 4-byte integer, .TRUE. == 1; a Fortran procedure argument
is passed as the procedure's address. MPI_Fint is int and every handle except
MPI_File is an int (MPICH ABI), so integer and handle arrays pass through
unchanged, and MPI_Status has the layout of INTEGER status(MPI_STATUS_SIZE).
"""
import argparse
import os
import re
import sys

# --------------------------------------------------------------------------
# Rules: what the C prototypes do not say
# --------------------------------------------------------------------------

# int-valued handle types (MPI_File, a pointer, is converted by f2c/c2f)
HANDLES = ['MPI_Comm', 'MPI_Group', 'MPI_Datatype', 'MPI_Op', 'MPI_Errhandler',
           'MPI_Info', 'MPI_Win', 'MPI_Request', 'MPI_Message', 'MPI_File']

# C integer types and the Fortran kind parameter that matches them
INT_KINDS = {'int': None, 'MPI_Fint': None, 'MPI_Aint': 'MPI_ADDRESS_KIND',
             'MPI_Offset': 'MPI_OFFSET_KIND', 'MPI_Count': 'MPI_COUNT_KIND'}

# int arguments that are LOGICAL in Fortran (by name, in every function)
LOGICAL_NAMES = {'flag', 'commute', 'reorder', 'periods', 'remain_dims', 'weighted'}

# LOGICAL output arrays, and the argument holding their length
LOGICAL_OUT_LEN = {('MPI_Cart_get', 'periods'): 'maxdims'}

# void * arguments that receive an address (Fortran INTEGER(MPI_ADDRESS_KIND)
# in `mpi`, TYPE(C_PTR) in `mpi_f08`)
ADDRESS_NAMES = {'baseptr'}

# int arrays that may be MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY, or MPI_ERRCODES_IGNORE
WEIGHT_NAMES = {'sourceweights', 'destweights', 'weights'}
ERRCODE_NAMES = {'array_of_errcodes'}

# Arrays of strings (MPI_Comm_spawn and _spawn_multiple), Fortran
# CHARACTER(len=*) arrays: 'argv' is argv(*), ended by the first blank
# element; 'list' is array_of_commands(*), one string per command; 'argvs' is
# array_of_argv(count,*), command i's arguments in row i, each row ended by a
# blank element. Only the root's are read (SPECIAL bodies below).
STR_ARRAYS = {('MPI_Comm_spawn', 'argv'): 'str_argv',
              ('MPI_Comm_spawn_multiple', 'array_of_commands'): 'str_list',
              ('MPI_Comm_spawn_multiple', 'array_of_argv'): 'str_argvs'}

# MPI-1 functions whose Fortran binding has INTEGER where C has MPI_Aint
# (addresses, extents, displacements): the glue widens and narrows. For an
# array the value names the argument holding its length.
F_INT_AINT = {('MPI_Address', 'address'): None, ('MPI_Type_extent', 'extent'): None,
              ('MPI_Type_lb', 'displacement'): None, ('MPI_Type_ub', 'displacement'): None,
              ('MPI_Type_hvector', 'stride'): None,
              ('MPI_Type_hindexed', 'array_of_displacements'): 'count',
              ('MPI_Type_struct', 'array_of_displacements'): 'count'}

# MPI_File * arguments that are output only (no handle to convert on input)
FILE_OUT_ONLY = {'MPI_File_open'}

# Callbacks whose Fortran procedure has the C signature (every argument by
# reference), so its address is handed to the library as it is; the value is
# the mpi_f08 abstract interface (BIND(C)) the procedure must have.
PASS_CALLBACKS = {
    'MPI_User_function': 'MPI_User_function',
    'MPI_Comm_errhandler_function': 'MPI_Comm_errhandler_function',
    'MPI_Comm_errhandler_fn': 'MPI_Comm_errhandler_function',
    'MPI_Handler_function': 'MPI_Comm_errhandler_function',
    'MPI_Win_errhandler_function': 'MPI_Win_errhandler_function',
    'MPI_Win_errhandler_fn': 'MPI_Win_errhandler_function',
}

# Attribute callbacks written in Fortran (their arguments differ from C's: all
# by reference, values are integers): the glue stores them with the keyval
# and calls them from a C trampoline. Pseudo-types used in SPECIAL params;
# the value is the mpi_f08 abstract interface (None: not in mpi_f08).
F_CALLBACKS = {'plxf_comm_copy': 'MPI_Comm_copy_attr_function',
               'plxf_comm_delete': 'MPI_Comm_delete_attr_function',
               'plxf_type_copy': 'MPI_Type_copy_attr_function',
               'plxf_type_delete': 'MPI_Type_delete_attr_function',
               'plxf_copy1': None, 'plxf_delete1': None}

# The predefined attribute callbacks, as Fortran procedures of the glue:
# (name, kind: copy2/delete2/copy1/delete1, what it does, f08 object type)
F_PREDEFINED_CALLBACKS = [
    ('MPI_COMM_NULL_COPY_FN', 'copy2', 'null', 'MPI_Comm'),
    ('MPI_COMM_DUP_FN', 'copy2', 'dup', 'MPI_Comm'),
    ('MPI_COMM_NULL_DELETE_FN', 'delete2', 'null', 'MPI_Comm'),
    ('MPI_TYPE_NULL_COPY_FN', 'copy2', 'null', 'MPI_Datatype'),
    ('MPI_TYPE_DUP_FN', 'copy2', 'dup', 'MPI_Datatype'),
    ('MPI_TYPE_NULL_DELETE_FN', 'delete2', 'null', 'MPI_Datatype'),
    ('MPI_NULL_COPY_FN', 'copy1', 'null', None),
    ('MPI_DUP_FN', 'copy1', 'dup', None),
    ('MPI_NULL_DELETE_FN', 'delete1', 'null', None),
]

# Functions with their own Fortran argument list and glue body. 'params' is
# the Fortran argument list written as C (classified like any prototype);
# 'body' computes rc from the glue's arguments ({fn} is MPI_X or PMPI_X).
SPECIAL = {
    # Fortran has no argc/argv
    'MPI_Init': dict(params='', body='rc = {fn}(NULL, NULL);'),
    'MPI_Init_thread': dict(params='int required, int *provided',
                            body='rc = {fn}(NULL, NULL, *required, provided);'),
    # MPI_PCONTROL(LEVEL) has no IERROR
    'MPI_Pcontrol': dict(params='const int level', body='{fn}(*level);', noierr=True),
    # the detached address has no use in Fortran
    'MPI_Buffer_detach': dict(params='void *buffer_addr, int *size',
                              body='void *addr_ = NULL;\n    (void)buffer_addr;\n'
                                   '    rc = {fn}(&addr_, size);'),
    # Fortran attribute values are integers: a predefined attribute's C value
    # points at an int; a value stored from Fortran is the integer itself
    'MPI_Comm_get_attr': dict(
        params='MPI_Comm comm, int comm_keyval, MPI_Aint *attribute_val, int *flag',
        body='void *v_ = NULL;\n    int f_ = 0;\n'
             '    rc = {fn}((MPI_Comm)*comm, *comm_keyval, &v_, &f_);\n'
             '    if (rc == MPI_SUCCESS && f_)\n'
             '        *attribute_val = plxf_attr_value(*comm_keyval, v_);\n'
             '    *flag = f_ ? PLXF_TRUE : PLXF_FALSE;'),
    'MPI_Attr_get': dict(
        params='MPI_Comm comm, int keyval, int *attribute_val, int *flag',
        body='void *v_ = NULL;\n    int f_ = 0;\n'
             '    rc = {fn}((MPI_Comm)*comm, *keyval, &v_, &f_);\n'
             '    if (rc == MPI_SUCCESS && f_)\n'
             '        *attribute_val = (MPI_Fint)plxf_attr_value(*keyval, v_);\n'
             '    *flag = f_ ? PLXF_TRUE : PLXF_FALSE;'),
}

def _keyval_special(copy, delete, names, mpi1):
    """A keyval constructor with Fortran callbacks; names = the standard's
    (copy, delete, keyval) dummy names, for keyword calls."""
    cn, dn, kn = names
    extra = 'int *extra_state' if mpi1 else 'MPI_Aint *extra_state'
    return dict(
        params='%s *%s, %s *%s, int *%s, %s' % (copy, cn, delete, dn, kn, extra),
        body='struct plxf_keyval *k_ = plxf_keyval_new(%s, %s, *extra_state, %d);\n'
             '    if (!k_)\n'
             '        rc = plxf_nomem("{fn}");\n'
             '    else\n'
             '        rc = {fn}(plxf_copy_tramp, plxf_delete_tramp, %s, k_);' % (cn, dn, mpi1, kn))


SPECIAL['MPI_Comm_create_keyval'] = _keyval_special(
    'plxf_comm_copy', 'plxf_comm_delete', ('comm_copy_attr_fn', 'comm_delete_attr_fn', 'comm_keyval'), 0)
SPECIAL['MPI_Type_create_keyval'] = _keyval_special(
    'plxf_type_copy', 'plxf_type_delete', ('type_copy_attr_fn', 'type_delete_attr_fn', 'type_keyval'), 0)
SPECIAL['MPI_Keyval_create'] = _keyval_special('plxf_copy1', 'plxf_delete1', ('copy_fn', 'delete_fn', 'keyval'), 1)
# attribute values set from Fortran are the integers themselves
SPECIAL['MPI_Comm_set_attr'] = dict(
    params='MPI_Comm comm, int comm_keyval, MPI_Aint *attribute_val',
    body='rc = {fn}((MPI_Comm)*comm, *comm_keyval, (void *)(intptr_t)*attribute_val);')
SPECIAL['MPI_Type_set_attr'] = dict(
    params='MPI_Datatype datatype, int type_keyval, MPI_Aint *attribute_val',
    body='rc = {fn}((MPI_Datatype)*datatype, *type_keyval, (void *)(intptr_t)*attribute_val);')
SPECIAL['MPI_Attr_put'] = dict(
    params='MPI_Comm comm, int keyval, int *attribute_val',
    body='rc = {fn}((MPI_Comm)*comm, *keyval, (void *)(intptr_t)*attribute_val);')
SPECIAL['MPI_Type_get_attr'] = dict(
    params='MPI_Datatype datatype, int type_keyval, MPI_Aint *attribute_val, int *flag',
    body='void *v_ = NULL;\n    int f_ = 0;\n'
         '    rc = {fn}((MPI_Datatype)*datatype, *type_keyval, &v_, &f_);\n'
         '    if (rc == MPI_SUCCESS && f_)\n'
         '        *attribute_val = plxf_attr_value(*type_keyval, v_);\n'
         '    *flag = f_ ? PLXF_TRUE : PLXF_FALSE;')

SPECIAL['MPI_Type_match_size'] = dict(
    # a Fortran caller gets the Fortran type of that size (REAL*16 is not
    # the C long double in gfortran)
    params='int typeclass, int size, MPI_Datatype *datatype',
    body='MPI_Datatype t_ = MPI_DATATYPE_NULL;\n'
         '    rc = {fn}(*typeclass, *size, &t_);\n'
         '    *datatype = plxf_fortran_type(t_);')

# Spawn: the command and argument arrays count at the root only, where a
# program may pass anything (an unterminated argv, any count), so the glue
# converts them at the root only (plxf_spawn_root).
SPECIAL['MPI_Comm_spawn'] = dict(
    params='const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, '
           'MPI_Comm *intercomm, int array_of_errcodes[]',
    body='char *c_command = NULL;\n    char **c_argv = MPI_ARGV_NULL;\n'
         '    int at_root_ = plxf_spawn_root(*comm, *root, &rc);\n'
         '    if (at_root_ > 0 && (!(c_command = plxf_str_in(command, command_len)) ||\n'
         '                         (argv != plxf_argv_null_ && plxf_argv_in(argv, argv_len, 1, &c_argv)))) {{\n'
         '        /* out of memory: the call goes on without a command, so that every\n'
         '         * process returns the root\'s error instead of waiting for it */\n'
         '        free(c_command);\n'
         '        c_command = NULL;\n'
         '    }}\n'
         '    if (at_root_ >= 0)\n'
         '        rc = {fn}(c_command, c_argv, *maxprocs, (MPI_Info)*info, *root, (MPI_Comm)*comm, intercomm,\n'
         '                  plxf_errcodes(array_of_errcodes));\n'
         '    free(c_command);\n    plxf_argv_free(c_argv);')
SPECIAL['MPI_Comm_spawn_multiple'] = dict(
    params='int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[], '
           'const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm, '
           'int array_of_errcodes[]',
    body='char **c_cmds = NULL;\n    char ***c_argvs = MPI_ARGVS_NULL;\n'
         '    int at_root_ = plxf_spawn_root(*comm, *root, &rc), n_ = at_root_ > 0 ? *count : 0;\n'
         '    if (n_ > 0 && (plxf_strs_in(array_of_commands, array_of_commands_len, n_, &c_cmds) ||\n'
         '                   (array_of_argv != plxf_argvs_null_ &&\n'
         '                    plxf_argvs_in(array_of_argv, array_of_argv_len, n_, &c_argvs)))) {{\n'
         '        /* out of memory: the call goes on without commands (see MPI_Comm_spawn) */\n'
         '        plxf_argv_free(c_cmds);\n'
         '        c_cmds = NULL;\n'
         '    }}\n'
         '    if (at_root_ >= 0)\n'
         '        rc = {fn}(*count, c_cmds, c_argvs, array_of_maxprocs, array_of_info, *root, (MPI_Comm)*comm,\n'
         '                  intercomm, plxf_errcodes(array_of_errcodes));\n'
         '    plxf_argv_free(c_cmds);\n    plxf_argvs_free(c_argvs, n_);')

# Left out on purpose (others are left out when an argument has no rule).
SKIP = {
    'MPIR_Dup_fn': 'library-internal callback',
    'MPI_Win_set_attr': 'attributes set from Fortran need Fortran keyvals',
    'MPI_Win_get_attr': 'window attributes need per-keyval conversion',
}

# MPI-1 functions that MPI-3 removed: in mpif.h and `mpi`, not in mpi_f08
NOT_IN_F08 = {'MPI_Errhandler_create', 'MPI_Errhandler_set', 'MPI_Errhandler_get',
              'MPI_Keyval_create', 'MPI_Keyval_free', 'MPI_Attr_get', 'MPI_Attr_put',
              'MPI_Attr_delete', 'MPI_Address', 'MPI_Type_extent', 'MPI_Type_lb',
              'MPI_Type_ub', 'MPI_Type_struct', 'MPI_Type_hvector', 'MPI_Type_hindexed'}

# the kind constants spelled as ISO_C_BINDING kinds in mpi_f08 (same values),
# so the BIND(C) interfaces are interoperable
F08_KIND_NAMES = {'MPI_ADDRESS_KIND': 'c_intptr_t', 'MPI_OFFSET_KIND': 'c_int64_t',
                  'MPI_COUNT_KIND': 'c_int64_t', 'MPI_INTEGER_KIND': 'c_int'}
# Fortran-only constants (facts of the ABI: checked by _Static_assert in the glue)
F_CONSTANTS = [('MPI_STATUS_SIZE', 5), ('MPI_SOURCE', 3), ('MPI_TAG', 4), ('MPI_ERROR', 5),
               ('MPI_ADDRESS_KIND', 8), ('MPI_OFFSET_KIND', 8), ('MPI_COUNT_KIND', 8),
               ('MPI_INTEGER_KIND', 4)]
F08_SKIP_CONSTANTS = {'MPI_SOURCE', 'MPI_TAG', 'MPI_ERROR'}   # status components in mpi_f08
F_LOGICAL_CONSTANTS = [('MPI_SUBARRAYS_SUPPORTED', False),
                       ('MPI_ASYNC_PROTECTS_NONBLOCKING', False)]

# Sentinels: Fortran variables in common blocks whose addresses the glue
# recognises. (name, common block, legacy declaration, f08 declaration)
SENTINELS = [
    ('MPI_BOTTOM', 'plxf_bottom', 'INTEGER MPI_BOTTOM', 'integer :: MPI_BOTTOM'),
    ('MPI_IN_PLACE', 'plxf_in_place', 'INTEGER MPI_IN_PLACE', 'integer :: MPI_IN_PLACE'),
    ('MPI_STATUS_IGNORE', 'plxf_status_ignore', 'INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)',
     'type(MPI_Status) :: MPI_STATUS_IGNORE'),
    ('MPI_STATUSES_IGNORE', 'plxf_statuses_ignore',
     'INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)',
     'type(MPI_Status) :: MPI_STATUSES_IGNORE(1)'),
    ('MPI_ERRCODES_IGNORE', 'plxf_errcodes_ignore', 'INTEGER MPI_ERRCODES_IGNORE(1)',
     'integer :: MPI_ERRCODES_IGNORE(1)'),
    ('MPI_UNWEIGHTED', 'plxf_unweighted', 'INTEGER MPI_UNWEIGHTED(1)',
     'integer :: MPI_UNWEIGHTED(1)'),
    ('MPI_WEIGHTS_EMPTY', 'plxf_weights_empty', 'INTEGER MPI_WEIGHTS_EMPTY(1)',
     'integer :: MPI_WEIGHTS_EMPTY(1)'),
    ('MPI_ARGV_NULL', 'plxf_argv_null', 'CHARACTER*1 MPI_ARGV_NULL(1)',
     'character(len=1) :: MPI_ARGV_NULL(1)'),
    ('MPI_ARGVS_NULL', 'plxf_argvs_null', 'CHARACTER*1 MPI_ARGVS_NULL(1,1)',
     'character(len=1) :: MPI_ARGVS_NULL(1,1)'),
]

# #defines that are not Fortran constants
CONST_SKIP = re.compile(r'^(MPI_\w*_FN|MPI_CONVERSION_FN_NULL|MPI_BOTTOM|MPI_IN_PLACE|'
                        r'MPI_STATUSE?S?_IGNORE|MPI_ERRCODES_IGNORE|MPI_ARGVS?_NULL)$')


class Unsupported(Exception):
    pass


# --------------------------------------------------------------------------
# Parsing mpi.h
# --------------------------------------------------------------------------

def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


def parse_header(path):
    text = strip_comments(open(path).read())
    # join continued lines of macros
    text = text.replace('\\\n', ' ')
    defines = []
    for m in re.finditer(r'^[ \t]*#[ \t]*define[ \t]+(MPIX?_\w+)[ \t]+([^\n]*)$', text, re.M):
        defines.append((m.group(1), m.group(2).strip()))
    body = re.sub(r'^[ \t]*#[^\n]*$', ' ', text, flags=re.M)
    pmpi = set(re.findall(r'\b(PMPIX?_\w+)\s*\(', body))
    protos = []
    seen = set()
    for m in re.finditer(r'\b(int|double|MPI_Aint)\s+(MPIX?_\w+)\s*\(([^;{)]*(?:\)[^;{)]*)*)\)\s*;',
                         body):
        ret, name, params = m.group(1), m.group(2), ' '.join(m.group(3).split())
        if name in seen:
            continue
        seen.add(name)
        protos.append((ret, name, params))
    return defines, protos, pmpi


def int32(v):
    v &= 0xffffffff
    return v - (1 << 32) if v & 0x80000000 else v


def parse_constants(defines):
    """Returns [(name, value, handle type or None)] in header order."""
    raw = dict(defines)
    out = []

    def resolve(val, depth=0):
        val = val.strip()
        while val.startswith('(') and val.endswith(')') and balanced(val[1:-1]):
            val = val[1:-1].strip()
        m = re.match(r'^\((MPI_\w+)\)\s*(.*)$', val)
        if m:
            if m.group(1) not in HANDLES:
                return None
            r = resolve(m.group(2), depth + 1)
            return None if r is None else (r[0], m.group(1))
        if re.match(r'^-?(0x[0-9a-fA-F]+|\d+)$', val):
            return (int32(int(val, 0)), None)
        if re.match(r'^MPIX?_\w+$', val) and val in raw and depth < 8:
            return resolve(raw[val], depth + 1)
        return None

    for name, val in defines:
        if CONST_SKIP.match(name) or name.startswith('PMPI_'):
            continue
        r = resolve(val)
        if r is not None:
            out.append((name, r[0], r[1]))
    return out


def balanced(s):
    d = 0
    for ch in s:
        d += ch == '('
        d -= ch == ')'
        if d < 0:
            return False
    return d == 0


# --------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------

STR_ARRAY_KINDS = set(STR_ARRAYS.values())


class Arg:
    """One argument: how it looks in C, in Fortran and in the glue."""

    def __init__(self, fname, text):
        self.text = text
        t = text.strip()
        self.const = bool(re.search(r'\bconst\b', t))
        t = re.sub(r'\bconst\b', ' ', t).strip()
        m = re.match(r'^(.*?)\b(\w+)\s*((?:\[\s*\w*\s*\])*)$', t)
        if not m:
            raise Unsupported('cannot parse argument "%s"' % text)
        head, self.name, arr = m.group(1), m.group(2), m.group(3)
        self.ptr = head.count('*')
        self.base = head.replace('*', '').strip()
        self.dims = re.findall(r'\[\s*(\w*)\s*\]', arr)
        self.fname = fname
        self.classify()

    # kinds: int, intp, handle, handlep, file, filep, buf, addr, str_in,
    # str_out, status_in, status, statuses, log_in, log_out, log_arr_in,
    # log_arr_out, weights, errcodes, callback
    def classify(self):
        b, n, p, d = self.base, self.name, self.ptr, self.dims
        self.array = bool(d) or n == 'array_of_statuses'
        if (self.fname, n) in F_INT_AINT and b == 'MPI_Aint':
            self.kind = 'i2a_arr' if d else ('i2a_out' if p else 'i2a')
            self.lenarg = F_INT_AINT[(self.fname, n)]
            if d and not self.lenarg:
                raise Unsupported('INTEGER displacement array %s without a length rule' % n)
        elif b in PASS_CALLBACKS and p == 1:
            self.kind = 'callback'
        elif b in F_CALLBACKS and p == 1:
            self.kind = 'fcallback'
        elif b.endswith('_function') or b.endswith('_fn'):
            raise Unsupported('callback argument %s (%s)' % (n, b))
        elif b == 'void' and p == 1:
            self.kind = 'addr' if n in ADDRESS_NAMES else 'buf'
        elif b == 'char' and (self.fname, n) in STR_ARRAYS:
            self.kind = STR_ARRAYS[(self.fname, n)]
        elif b == 'char' and p + len(d) == 1:
            self.kind = 'str_in' if self.const else 'str_out'
        elif b == 'MPI_Status' and p == 1:
            if self.array:
                self.kind = 'statuses'
            else:
                self.kind = 'status_in' if self.const else 'status'
        elif b == 'MPI_File':
            if p + len(d) == 0:
                self.kind = 'file'
            elif p == 1 and not d:
                self.kind = 'filep'
            else:
                raise Unsupported('array of MPI_File')
        elif b in HANDLES:
            self.kind = 'handle' if p + len(d) == 0 else 'handlep'
            if p + len(d) > 1:
                raise Unsupported('argument %s' % self.text)
        elif b == 'int' and n in LOGICAL_NAMES:
            if p + len(d) == 0:
                self.kind = 'log_in'
            elif d:
                self.kind = 'log_arr_in' if self.const else 'log_arr_out'
            else:
                self.kind = 'log_out'
        elif b == 'int' and n in WEIGHT_NAMES and (p or d):
            self.kind = 'weights'
        elif b == 'int' and n in ERRCODE_NAMES and (p or d):
            self.kind = 'errcodes'
        elif b in INT_KINDS:
            if p + len(d) == 0:
                self.kind = 'int'
            elif p + (1 if d else 0) == 1 or (len(d) == 2 and p == 0):
                self.kind = 'intp'
            else:
                raise Unsupported('argument %s' % self.text)
        else:
            raise Unsupported('argument %s (type %s)' % (n, b))

    # ---- glue (C) ----
    def c_ctype(self):
        if self.base in INT_KINDS and self.base not in ('int', 'MPI_Fint'):
            return self.base
        return 'MPI_Fint'

    def glue_param(self):
        k = self.kind
        if k == 'fcallback':
            return 'plxf_fproc %s' % self.name
        if k == 'callback':
            return '%s *%s' % (self.base, self.name)
        if k in ('buf', 'addr'):
            return 'void *%s' % self.name
        if k in ('str_in', 'str_out') or k in STR_ARRAY_KINDS:
            return 'char *%s' % self.name
        if k in ('int', 'intp'):
            return '%s *%s' % (self.c_ctype(), self.name)
        return 'MPI_Fint *%s' % self.name

    def has_len(self):
        return self.kind in ('str_in', 'str_out') or self.kind in STR_ARRAY_KINDS

    def glue_pre(self):
        n = self.name
        if self.kind == 'filep':
            if self.fname in FILE_OUT_ONLY:
                return ['MPI_File c_%s = MPI_FILE_NULL;' % n]
            return ['MPI_File c_%s = plxf_file_f2c(*%s);' % (n, n)]
        if self.kind == 'log_out':
            return ['int c_%s = 0;' % n]
        if self.kind == 'i2a_out':
            return ['MPI_Aint c_%s = 0;' % n]
        if self.kind == 'i2a_arr':
            return ['MPI_Aint *c_%s = plxf_aints(%s, *%s);' % (n, n, self.lenarg),
                    'if (!c_%s) {' % n, '    *ierr = plxf_nomem("%s");' % self.fname, '    return;', '}']
        return []

    def glue_call(self):
        n, k = self.name, self.kind
        if k == 'int':
            return '*%s' % n
        if k == 'log_in':
            return '(*%s != 0)' % n
        if k == 'i2a':
            return '(MPI_Aint)*%s' % n
        if k in ('i2a_out', 'i2a_arr'):
            return ('&c_%s' if k == 'i2a_out' else 'c_%s') % n
        if k == 'handle':
            return '(%s)*%s' % (self.base, n)
        if k == 'file':
            return 'plxf_file_f2c(*%s)' % n
        if k == 'filep':
            return '&c_%s' % n
        if k == 'buf':
            return 'plxf_buf(%s)' % n
        if k in ('str_in', 'str_out'):
            return 'c_%s' % n
        if k == 'status':
            return 'plxf_status(%s)' % n
        if k == 'status_in':
            return '(const MPI_Status *)%s' % n
        if k == 'statuses':
            return 'plxf_statuses(%s)' % n
        if k == 'log_out':
            return '&c_%s' % n
        if k == 'weights':
            return 'plxf_weights(%s)' % n
        if k == 'errcodes':
            return 'plxf_errcodes(%s)' % n
        if k in ('intp', 'handlep') and len(self.dims) == 2:
            return '(%s (*)[%s])%s' % (self.base, self.dims[1], n)
        return n

    def glue_post(self, fname):
        n, k = self.name, self.kind
        if k == 'str_out':
            return ['if (rc == MPI_SUCCESS)', '    plxf_str_out(c_%s, %s, %s_len);' % (n, n, n)]
        if k == 'filep':
            return ['*%s = plxf_file_c2f(c_%s);' % (n, n)]
        if k == 'log_out':
            return ['*%s = c_%s ? PLXF_TRUE : PLXF_FALSE;' % (n, n)]
        if k == 'i2a_out':
            # MPI-1's INTEGER cannot hold every address: truncated, as in MPICH
            return ['if (rc == MPI_SUCCESS)', '    *%s = (MPI_Fint)c_%s;' % (n, n)]
        if k == 'log_arr_out':
            ln = LOGICAL_OUT_LEN.get((fname, n))
            if not ln:
                raise Unsupported('LOGICAL output array %s without a length rule' % n)
            return ['if (rc == MPI_SUCCESS)',
                    '    for (MPI_Fint i_ = 0; i_ < *%s; i_++)' % ln,
                    '        %s[i_] = %s[i_] ? PLXF_TRUE : PLXF_FALSE;' % (n, n)]
        return []

    def glue_free(self):
        if self.kind in ('str_in', 'str_out', 'i2a_arr'):
            return ['free(c_%s);' % self.name]
        return []

    # ---- Fortran ----
    def kind_suffix(self):
        if self.kind.startswith('i2a'):
            return ''
        k = INT_KINDS.get(self.base)
        return '(kind=%s)' % k if k else ''

    def fdims(self):
        if self.kind == 'str_argvs':
            return '(count,*)'
        if self.kind in STR_ARRAY_KINDS:
            return '(*)'
        if self.kind == 'status':
            return '(MPI_STATUS_SIZE)'
        if self.kind == 'status_in':
            return '(MPI_STATUS_SIZE)'
        if self.kind == 'statuses':
            return '(MPI_STATUS_SIZE,*)'
        if len(self.dims) == 2:
            return '(%s,*)' % self.dims[1]
        if self.dims or (self.kind in ('weights', 'errcodes')):
            return '(*)'
        return ''

    def f_decl(self):
        """Declaration in mpif.h-style code (`mpi` module interfaces)."""
        k, n = self.kind, self.name
        if k == 'buf':
            return ['!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s' % n, 'type(*), dimension(*) :: %s' % n]
        if k == 'addr':
            return ['integer(kind=MPI_ADDRESS_KIND) :: %s' % n]
        if k in ('str_in', 'str_out') or k in STR_ARRAY_KINDS:
            return ['character(len=*) :: %s%s' % (n, self.fdims())]
        if k in ('callback', 'fcallback'):
            return ['external :: %s' % n]
        if k.startswith('log'):
            return ['logical :: %s%s' % (n, self.fdims())]
        return ['integer%s :: %s%s' % (self.kind_suffix(), n, self.fdims())]

    def f77_decl(self):
        """Declaration in the mpif.h interfaces: no IMPORT (the host is the
        user's program unit), so kinds and sizes are literals; every array
        is unchecked so that F77 habits (a scalar for a one-element array)
        keep working."""
        k, n = self.kind, self.name.upper()
        unchecked = ['!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s' % n,
                     '      TYPE(*), DIMENSION(*) :: %s' % n]
        if k in STR_ARRAY_KINDS:
            # checked: the glue needs the hidden CHARACTER length
            return ['      CHARACTER*(*) %s%s' % (n, self.fdims().upper())]
        if k == 'buf' or self.fdims():
            return unchecked
        if k == 'addr':
            return ['      INTEGER(KIND=8) %s' % n]
        if k in ('str_in', 'str_out'):
            return ['      CHARACTER*(*) %s' % n]
        if k in ('callback', 'fcallback'):
            return ['      EXTERNAL %s' % n]
        if k.startswith('log'):
            return ['      LOGICAL %s' % n]
        return ['      INTEGER%s %s' % ('(KIND=8)' if self.kind_suffix() else '', n)]

    def f08_type(self):
        k = self.kind
        if k in ('handle', 'handlep', 'file', 'filep'):
            return 'type(%s)' % self.base
        if k in ('status', 'status_in', 'statuses'):
            return 'type(MPI_Status)'
        if k.startswith('log'):
            return 'logical'
        return 'integer%s' % self.kind_suffix()

    def f08_dims(self):
        if self.kind in ('status', 'status_in'):
            return ''
        if self.kind == 'statuses':
            return '(*)'
        return self.fdims()

    def f08_decl(self):
        """Declaration in the mpi_f08 procedure."""
        k, n = self.kind, self.name
        if k == 'buf':
            return ['!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s' % n, 'type(*), dimension(*) :: %s' % n]
        if k == 'addr':
            return ['type(c_ptr) :: %s' % n]
        if k in ('str_in', 'str_out'):
            return ['character(len=*) :: %s' % n]
        if k in STR_ARRAY_KINDS:
            return ['character(len=*), intent(in) :: %s%s' % (n, self.fdims())]
        if k == 'callback':
            return ['procedure(%s) :: %s' % (PASS_CALLBACKS[self.base], n)]
        if k == 'fcallback':
            return ['procedure(%s) :: %s' % (F_CALLBACKS[self.base], n)]
        intent = ''
        if k in ('int', 'handle', 'file', 'log_in', 'status_in'):
            intent = ', intent(in)'
        return ['%s%s :: %s%s' % (self.f08_type(), intent, n, self.f08_dims())]

    def f08_iface_decl(self):
        """Declaration in the BIND(C) interface of the glue."""
        k, n = self.kind, self.name
        if k == 'buf':
            return ['type(*), dimension(*) :: %s' % n]
        if k == 'addr':
            return ['type(c_ptr) :: %s' % n]
        if k in ('str_in', 'str_out') or k in STR_ARRAY_KINDS:
            # an array of strings is passed as its characters in order
            return ['character(kind=c_char), dimension(*) :: %s' % n]
        if k in ('callback', 'fcallback'):
            return ['type(c_funptr), value :: %s' % n]
        if k.startswith('log'):
            # LOGICAL is not interoperable; the glue reads its 4 bytes
            return ['type(*)%s :: %s' % (', dimension(*)' if self.dims else '', n)]
        t = self.f08_type()
        return ['%s :: %s%s' % ('integer(c_int)' if t == 'integer' else t, n, self.f08_dims())]

    def f08_actual(self):
        if self.kind in ('callback', 'fcallback'):
            return 'c_funloc(%s)' % self.name
        return self.name


class Func:
    def __init__(self, ret, name, params):
        self.ret, self.name = ret, name
        self.special = SPECIAL.get(name)
        if self.special:
            params = self.special['params']
        self.noierr = ret != 'int' or bool(self.special and self.special.get('noierr'))
        params = params.strip()
        if params in ('', 'void'):
            plist = []
        else:
            plist = [p.strip() for p in params.split(',')]
        if '...' in plist:
            raise Unsupported('variable argument list')
        self.args = [Arg(name, p) for p in plist]
        if not self.special and any(a.kind in STR_ARRAY_KINDS for a in self.args):
            raise Unsupported('an array of strings needs a SPECIAL body')
        if any(a.has_len() for a in self.args) and any(a.kind == 'i2a_arr' for a in self.args):
            # the glue's early return for the array would leak the strings
            raise Unsupported('strings and INTEGER displacement arrays together')
        self.uses_file = any(a.kind in ('file', 'filep') for a in self.args)

    # ---- glue ----
    def glue(self, prefix):
        cname = prefix + self.name[len('MPI'):] if not self.name.startswith('MPIX') \
            else prefix.replace('MPI', 'MPIX') + self.name[len('MPIX'):]
        sym = cname.lower() + '_'
        params = [a.glue_param() for a in self.args]
        if not self.noierr:
            params.append('MPI_Fint *ierr')
        params += ['size_t %s_len' % a.name for a in self.args if a.has_len()]
        rtype = {'int': 'void', 'double': 'double', 'MPI_Aint': 'MPI_Aint'}[self.ret]
        if self.special and self.special.get('noierr'):
            rtype = 'void'
        lines = ['%s %s(%s)' % (rtype, sym, ', '.join(params) or 'void'), '{']
        body = []
        if self.ret != 'int':
            body.append('return %s(%s);' % (cname, ', '.join(a.glue_call() for a in self.args)))
        elif self.special:
            if not self.noierr:
                body.append('int rc;')
            body += self.special['body'].format(fn=cname).split('\n    ')
            if not self.noierr:
                body.append('*ierr = rc;')
        else:
            pre, post, free = [], [], []
            for a in self.args:
                pre += a.glue_pre()
                post += a.glue_post(self.name)
                free += a.glue_free()
            nomem = any(a.has_len() for a in self.args)
            body.append('int rc;')
            # strings are allocated first so that err_nomem frees only NULLs or nothing
            strs = [a for a in self.args if a.has_len()]
            for a in strs:
                body.append('char *c_%s = NULL;' % a.name)
            for a in strs:
                if a.kind == 'str_in':
                    body.append('c_%s = plxf_str_in(%s, %s_len);' % (a.name, a.name, a.name))
                else:
                    body.append('c_%s = plxf_str_tmp(%s_len);' % (a.name, a.name))
            if strs:
                body.append('if (%s)' % ' || '.join('!c_%s' % a.name for a in strs))
                body.append('    goto err_nomem;')
            body += pre
            body.append('rc = %s(%s);' % (cname, ', '.join(a.glue_call() for a in self.args)))
            body += post
            body.append('*ierr = rc;')
            if nomem:
                body.append('err_nomem:')
                body.append('if (%s)' % ' || '.join('!c_%s' % a.name for a in strs))
                body.append('    *ierr = plxf_nomem("%s");' % self.name)
            body += free
        lines += ['    ' + b if not b.endswith(':') else b for b in body]
        lines.append('}')
        aliases = []
        for alias in (cname.lower() + '__', cname.lower(), cname.upper()):
            aliases.append('extern __typeof__(%s) %s __attribute__((alias("%s")));' % (sym, alias, sym))
        return lines, sym, aliases

    # ---- mpif.h interface (subroutines only) ----
    def f77_interface(self):
        names = [a.name.upper() for a in self.args] + ([] if self.noierr else ['IERROR'])
        out = ['      INTERFACE']
        out += fixed_wrap('      SUBROUTINE %s(%s)' % (self.name.upper(), ', '.join(names)))
        for a in self.args:
            out += a.f77_decl()
        if not self.noierr:
            out.append('      INTEGER IERROR')
        out += ['      END SUBROUTINE', '      END INTERFACE']
        return out

    # ---- `mpi` module interface ----
    def f_interface(self):
        names = [a.name for a in self.args] + ([] if self.noierr else ['ierror'])
        out = []
        if self.ret == 'int':
            out.append(wrap('subroutine %s(%s)' % (self.name, ', '.join(names))))
        else:
            rt = 'double precision' if self.ret == 'double' else 'integer(kind=MPI_ADDRESS_KIND)'
            out.append(wrap('%s function %s(%s)' % (rt, self.name, ', '.join(names))))
        out.append('  import')
        out.append('  implicit none')
        for a in self.args:
            out += ['  ' + d for d in a.f_decl()]
        if not self.noierr:
            out.append('  integer :: ierror')
        out.append('end %s %s' % ('subroutine' if self.ret == 'int' else 'function', self.name))
        return out

    # ---- mpi_f08: BIND(C) interface to the glue, and the procedure ----
    def f08(self):
        base = self.name[len('MPI_'):] if self.name.startswith('MPI_') else self.name
        glue = 'plxf_c_' + base.lower()
        sym = self.name.lower() + '_'
        cargs = [a.name for a in self.args] + ([] if self.noierr else ['ierror'])
        cargs += ['%s_len' % a.name for a in self.args if a.has_len()]
        iface = []
        if self.ret == 'int':
            iface.append(wrap('subroutine %s(%s) bind(C, name="%s")' % (glue, ', '.join(cargs), sym)))
        else:
            rt = 'real(c_double)' if self.ret == 'double' else 'integer(kind=MPI_ADDRESS_KIND)'
            iface.append(wrap('%s function %s(%s) bind(C, name="%s")' % (rt, glue, ', '.join(cargs), sym)))
        iface.append('  import')
        iface.append('  implicit none')
        for a in self.args:
            iface += ['  ' + d for d in a.f08_iface_decl()]
        if not self.noierr:
            iface.append('  integer(c_int) :: ierror')
        for a in self.args:
            if a.has_len():
                iface.append('  integer(c_size_t), value :: %s_len' % a.name)
        iface.append('end %s %s' % ('subroutine' if self.ret == 'int' else 'function', glue))

        spec = self.name + '_f08'
        fargs = [a.name for a in self.args] + ([] if self.noierr else ['ierror'])
        actual = [a.f08_actual() for a in self.args] + ([] if self.noierr else ['ierror_c'])
        actual += ['len(%s, kind=c_size_t)' % a.name for a in self.args if a.has_len()]
        proc = []
        if self.ret == 'int':
            proc.append(wrap('subroutine %s(%s)' % (spec, ', '.join(fargs))))
        else:
            rt = 'double precision' if self.ret == 'double' else 'integer(kind=MPI_ADDRESS_KIND)'
            proc.append(wrap('%s function %s(%s)' % (rt, spec, ', '.join(fargs))))
        for a in self.args:
            proc += ['  ' + d for d in a.f08_decl()]
        if self.ret == 'int':
            if not self.noierr:
                proc.append('  integer, optional, intent(out) :: ierror')
                proc.append('  integer :: ierror_c')
            proc.append(wrap('  call %s(%s)' % (glue, ', '.join(actual))))
            if not self.noierr:
                proc.append('  if (present(ierror)) ierror = ierror_c')
            proc.append('end subroutine %s' % spec)
        else:
            proc.append(wrap('  %s = %s(%s)' % (spec, glue, ', '.join(actual))))
            proc.append('end function %s' % spec)
        return glue, iface, spec, proc


def fixed_wrap(line):
    """Continuation valid in fixed and free form: '&' in column 73 (beyond
    fixed form's 72) and '&' in column 6 of the next line."""
    out, cur = [], ''
    for tok in re.split(r'(?<=, )', line):
        if cur and len(cur) + len(tok) > 72:
            out.append(cur.ljust(72) + '&')
            cur = '     &    ' + tok
        else:
            cur += tok
    out.append(cur)
    return out


def wrap(line, width=100):
    """Free-form continuation for long lines."""
    if len(line) <= width:
        return line
    indent = len(line) - len(line.lstrip()) + 4
    out, cur = [], ''
    for tok in re.split(r'(?<=, )', line):
        if cur and len(cur) + len(tok) > width:
            out.append(cur.rstrip() + ' &')
            cur = ' ' * indent + tok
        else:
            cur += tok
    out.append(cur)
    return '\n'.join(out)


# --------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------

HEADER_NOTE = 'generated by bindings/fortran/gen_fortran.py from include/mpi.h: do not edit'


def const_lines_fixed(consts):
    out = []
    for name, val, _ in consts:
        out.append('      INTEGER %s' % name)
        out.append('      PARAMETER (%s=%d)' % (name, val))
    return out


def write_mpif(path, consts, funcs, interfaces):
    L = ['! mpif.h - MPI for Fortran 77 style programs (Plexus, MPICH ABI): constants,',
         '! sentinels (common blocks), function types and, for gfortran, interfaces.',
         '! ' + HEADER_NOTE,
         '! Valid in fixed and free source form.']
    fc = [(n, v, None) for n, v in F_CONSTANTS]
    L += const_lines_fixed(fc + consts)
    for n, v in F_LOGICAL_CONSTANTS:
        L.append('      LOGICAL %s' % n)
        L.append('      PARAMETER (%s=%s)' % (n, '.TRUE.' if v else '.FALSE.'))
    for name, block, decl, _ in SENTINELS:
        L.append('      ' + decl)
        L.append('      COMMON /%s/ %s' % (block.upper(), name))
    for f in funcs:
        if f.ret == 'double':
            L.append('      DOUBLE PRECISION %s' % f.name.upper())
            L.append('      EXTERNAL %s' % f.name.upper())
        elif f.ret == 'MPI_Aint':
            L.append('      INTEGER(KIND=MPI_ADDRESS_KIND) %s' % f.name.upper())
            L.append('      EXTERNAL %s' % f.name.upper())
    for name, _, _, _ in F_PREDEFINED_CALLBACKS:
        L.append('      EXTERNAL %s' % name)
    if interfaces:
        # explicit interfaces with unchecked buffers: gfortran >= 10 refuses
        # calls of one external with different buffer types in a file
        L.append('! interfaces (gfortran: choice buffers and arrays unchecked)')
        L += ['      INTERFACE', '      SUBROUTINE MPI_F_SYNC_REG(BUF)',
              '!GCC$ ATTRIBUTES NO_ARG_CHECK :: BUF', '      TYPE(*), DIMENSION(*) :: BUF',
              '      END SUBROUTINE', '      END INTERFACE']
        for f in funcs:
            if f.ret == 'int':
                L += f.f77_interface()
    for ln in L:
        if len(ln) > 72 and not ln.startswith('!') and not (len(ln) == 73 and ln.endswith('&')):
            raise SystemExit('gen_fortran: mpif.h line longer than 72 columns: ' + ln)
    open(path, 'w').write('\n'.join(L) + '\n')


def f_consts(consts, f08):
    out = []
    for n, v in F_CONSTANTS:
        if f08 and n in F08_SKIP_CONSTANTS:
            continue
        out.append('integer, parameter :: %s = %s' % (n, F08_KIND_NAMES.get(n, v) if f08 else v))
    for n, v, h in consts:
        if f08 and h:
            out.append('type(%s), parameter :: %s = %s(%d)' % (h, n, h, v))
        else:
            out.append('integer, parameter :: %s = %d' % (n, v))
    for n, v in F_LOGICAL_CONSTANTS:
        out.append('logical, parameter :: %s = %s' % (n, '.true.' if v else '.false.'))
    for name, block, decl, f08decl in SENTINELS:
        out.append(f08decl if f08 else decl.lower())
        out.append('common /%s/ %s' % (block, name))
    return out


def write_mpi_module(path, consts, funcs):
    L = ['! The `mpi` module (Plexus). ' + HEADER_NOTE, 'module mpi', 'implicit none', '']
    L += f_consts(consts, False)
    L += ['external :: %s' % name for name, _, _, _ in F_PREDEFINED_CALLBACKS]
    L.append('')
    for f in funcs:
        L.append('interface')
        L += ['  ' + x for x in '\n'.join(f.f_interface()).split('\n')]
        L.append('end interface')
    L += ['interface', '  subroutine MPI_F_sync_reg(buf)', '    !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf',
          '    type(*), dimension(*) :: buf', '  end subroutine MPI_F_sync_reg', 'end interface']
    generic, procs = sizeof_procedures(False)
    L += generic + ['private :: ' + n.split()[-1] for n in generic[1:-1]]
    L += ['', 'contains', ''] + procs
    L.append('end module mpi')
    open(path, 'w').write('\n'.join(L) + '\n')


F08_TYPES = HANDLES


# MPI_SIZEOF: one specific per intrinsic type and kind
SIZEOF_TYPES = [('i1', 'integer(kind=1)'), ('i2', 'integer(kind=2)'), ('i4', 'integer(kind=4)'),
                ('i8', 'integer(kind=8)'), ('r4', 'real(kind=4)'), ('r8', 'real(kind=8)'),
                ('r16', 'real(kind=16)'), ('c4', 'complex(kind=4)'), ('c8', 'complex(kind=8)'),
                ('c16', 'complex(kind=16)')]   # numeric types only, as the standard says


def sizeof_procedures(f08):
    """(generic interface lines, procedure lines) of MPI_SIZEOF: the size in
    bytes of one element of x (MPI 3.1 section 17.1.9)."""
    generic = ['interface MPI_Sizeof']
    procs = []
    ierr = ('  integer, optional, intent(out) :: ierror', '  if (present(ierror)) ierror = MPI_SUCCESS') \
        if f08 else ('  integer, intent(out) :: ierror', '  ierror = MPI_SUCCESS')
    for tag, t in SIZEOF_TYPES:
        # assumed rank: one specific takes scalars and arrays of any rank
        name = 'plxf_sizeof_%s' % tag
        generic.append('  module procedure %s' % name)
        body = '  size = storage_size(x) / 8'
        procs += ['subroutine %s(x, size, ierror)' % name,
                  '  %s, dimension(..), intent(in) :: x' % t,
                  '  integer, intent(out) :: size', ierr[0], body, ierr[1],
                  'end subroutine %s' % name]
    generic.append('end interface MPI_Sizeof')
    return generic, procs


# MPI_F_SYNC_REG(buf): an external call the compiler must assume reads and
# writes buf, so it keeps buf in memory around nonblocking MPI calls
SYNC_REG_GLUE = r'''
/* MPI_F_SYNC_REG: nothing to do; being an opaque external call is its purpose */
PLXF_API void mpi_f_sync_reg_(void *buf);
void mpi_f_sync_reg_(void *buf)
{
    (void)buf;
}
PLXF_API extern __typeof__(mpi_f_sync_reg_) mpi_f_sync_reg__ __attribute__((alias("mpi_f_sync_reg_")));
PLXF_API extern __typeof__(mpi_f_sync_reg_) mpi_f_sync_reg __attribute__((alias("mpi_f_sync_reg_")));
PLXF_API extern __typeof__(mpi_f_sync_reg_) MPI_F_SYNC_REG __attribute__((alias("mpi_f_sync_reg_")));
PLXF_API extern __typeof__(mpi_f_sync_reg_) pmpi_f_sync_reg_ __attribute__((alias("mpi_f_sync_reg_")));
'''


def copy_delete_interfaces(copy, delete, objtype):
    """Interface bodies of an mpi_f08 copy and/or delete attribute callback."""
    out = []
    if copy:
        out += ['subroutine %s(oldobj, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)'
                % copy,
                '  import', '  type(%s) :: oldobj' % objtype, '  integer :: keyval, ierror',
                '  integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out',
                '  logical :: flag', 'end subroutine %s' % copy]
    if delete:
        out += ['subroutine %s(obj, keyval, attribute_val, extra_state, ierror)' % delete,
                '  import', '  type(%s) :: obj' % objtype, '  integer :: keyval, ierror',
                '  integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state',
                'end subroutine %s' % delete]
    return out


def write_f08_module(path, consts, funcs):
    """Three modules in one file: mpi_f08_types (types, constants, callback
    interfaces), plexus_f08_glue (BIND(C) interfaces to the glue; used only
    inside the procedures, so they are not re-exported) and mpi_f08."""
    L = ['! The `mpi_f08` module (Plexus). ' + HEADER_NOTE,
         '! Handles are BIND(C) types holding the C handle (an int), so the glue',
         '! of mpif.h/`mpi` serves both: each procedure calls it through BIND(C).',
         'module mpi_f08_types', 'use, intrinsic :: iso_c_binding', 'implicit none', '']
    for t in F08_TYPES:
        L += ['type, bind(C) :: %s' % t, '  integer(c_int) :: MPI_VAL', 'end type %s' % t]
    L += ['type, bind(C) :: MPI_Status',
          '  integer(c_int) :: count_lo, count_hi_and_cancelled',
          '  integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR',
          'end type MPI_Status', '']
    L += f_consts(consts, True)
    # the standard's callback interfaces (not BIND(C)): gfortran calls them
    # like C, VALUE pointers by value and the rest by reference
    L += ['', 'abstract interface',
          'subroutine MPI_User_function(invec, inoutvec, len, datatype)',
          '  import', '  type(c_ptr), value :: invec, inoutvec', '  integer :: len',
          '  type(MPI_Datatype) :: datatype', 'end subroutine MPI_User_function',
          'subroutine MPI_Comm_errhandler_function(comm, error_code)',
          '  import', '  type(MPI_Comm) :: comm', '  integer :: error_code',
          'end subroutine MPI_Comm_errhandler_function',
          'subroutine MPI_Win_errhandler_function(win, error_code)',
          '  import', '  type(MPI_Win) :: win', '  integer :: error_code',
          'end subroutine MPI_Win_errhandler_function']
    for obj, t in (('Comm', 'MPI_Comm'), ('Type', 'MPI_Datatype')):
        L += copy_delete_interfaces('MPI_%s_copy_attr_function' % obj, 'MPI_%s_delete_attr_function' % obj, t)
    L += ['end interface', '']
    # the predefined callbacks: procedures of the glue (mpi_comm_dup_fn_ ...)
    L.append('interface')
    for name, kind, _, t in F_PREDEFINED_CALLBACKS:
        if t:
            L += copy_delete_interfaces(name if kind.startswith('copy') else None,
                                        name if kind.startswith('delete') else None, t)
    L += ['end interface', '']
    # == and /= on handles
    L.append('interface operator(==)')
    L += ['  module procedure plxf_eq_%s' % t[4:].lower() for t in F08_TYPES]
    L.append('end interface')
    L.append('interface operator(/=)')
    L += ['  module procedure plxf_ne_%s' % t[4:].lower() for t in F08_TYPES]
    L.append('end interface')
    for t in F08_TYPES:
        L.append('private :: plxf_eq_%s, plxf_ne_%s' % (t[4:].lower(), t[4:].lower()))
    L += ['', 'contains', '']
    for t in F08_TYPES:
        s = t[4:].lower()
        for op, sym in (('eq', '=='), ('ne', '/=')):
            L += ['elemental logical function plxf_%s_%s(a, b)' % (op, s),
                  '  type(%s), intent(in) :: a, b' % t,
                  '  plxf_%s_%s = a%%MPI_VAL %s b%%MPI_VAL' % (op, s, sym),
                  'end function plxf_%s_%s' % (op, s)]
    L += ['end module mpi_f08_types', '']

    L += ['module plexus_f08_glue', 'use mpi_f08_types', 'implicit none', 'interface']
    procs = []
    generics = []
    # MPI 4.0: the large-count form X_c is one more specific procedure of the
    # generic X (its counts are INTEGER(MPI_COUNT_KIND), so the two differ)
    # -- except where the only wide arguments are MPI_Aint ones, which have the
    # same kind as MPI_Count here: those _c forms keep their own name only
    same_kinds = {'MPI_Type_get_extent', 'MPI_Type_get_true_extent', 'MPI_Type_create_resized',
                  'MPI_File_get_type_extent'}
    names = {f.name for f in funcs}
    large = {f.name[:-2]: f.name + '_f08' for f in funcs
             if f.name.endswith('_c') and f.name[:-2] in names and f.name[:-2] not in same_kinds}
    for f in funcs:
        glue, iface, spec, proc = f.f08()
        L += ['  ' + x for x in '\n'.join(iface).split('\n')]
        generics += ['interface %s' % f.name, '  module procedure %s' % spec]
        if f.name in large:
            generics.append('  module procedure %s' % large[f.name])
        generics.append('end interface %s' % f.name)
        proc.insert(1, '  use plexus_f08_glue, only: %s' % glue)
        procs.append(proc)
    L += ['end interface', 'end module plexus_f08_glue', '']

    L += ['module mpi_f08', 'use mpi_f08_types', 'implicit none', '']
    L += generics
    L += ['interface', '  subroutine MPI_F_sync_reg(buf) bind(C, name="mpi_f_sync_reg_")',
          '    type(*), dimension(*) :: buf', '  end subroutine MPI_F_sync_reg', 'end interface']
    sgeneric, sprocs = sizeof_procedures(True)
    L += sgeneric + ['private :: ' + n.split()[-1] for n in sgeneric[1:-1]]
    L += ['', 'contains', ''] + sprocs
    for proc in procs:
        L += proc
        L.append('')
    L.append('end module mpi_f08')
    open(path, 'w').write('\n'.join(L) + '\n')


GLUE_PRELUDE = r'''/*
 * mpi_fortran.c - the Fortran entry points of Plexus.
 * {note}
 *
 * Each MPI_X has four Fortran symbols (mpi_x_, mpi_x__, mpi_x, MPI_X) and its
 * PMPI_X twin; they convert Fortran arguments and call the C function.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

_Static_assert(sizeof(MPI_Fint) == 4, "MPI_INTEGER_KIND is 4");
_Static_assert(sizeof(MPI_Aint) == 8, "MPI_ADDRESS_KIND is 8");
_Static_assert(sizeof(MPI_Offset) == 8, "MPI_OFFSET_KIND is 8");
_Static_assert(sizeof(MPI_Count) == 8, "MPI_COUNT_KIND is 8");
_Static_assert(sizeof(MPI_Status) == 5 * sizeof(MPI_Fint), "MPI_STATUS_SIZE is 5");
_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == 2 * sizeof(MPI_Fint), "MPI_SOURCE is 3");
_Static_assert(offsetof(MPI_Status, MPI_TAG) == 3 * sizeof(MPI_Fint), "MPI_TAG is 4");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == 4 * sizeof(MPI_Fint), "MPI_ERROR is 5");

#define PLXF_TRUE 1   /* gfortran's .TRUE. */
#define PLXF_FALSE 0
#define PLXF_API __attribute__((visibility("default")))
/* gfortran aligns common blocks to 16 bytes */
#define PLXF_COMMON PLXF_API __attribute__((aligned(16)))

/* The sentinels' common blocks. A program's copy (if the program defines
 * the block) and this one are one object after dynamic linking, so the
 * addresses the program passes are the addresses compared here. */
{sentinels}

static inline void *plxf_buf(void *p)
{{
    if (p == (void *)&plxf_bottom_)
        return MPI_BOTTOM;
    if (p == (void *)&plxf_in_place_)
        return MPI_IN_PLACE;
    return p;
}}

/* INTEGER displacements of MPI-1 calls as MPI_Aint */
static MPI_Aint *plxf_aints(const MPI_Fint *f, MPI_Fint n)
{{
    MPI_Aint *a = malloc((n > 0 ? (size_t)n : 1) * sizeof *a);
    if (a)
        for (MPI_Fint i = 0; i < n; i++)
            a[i] = f[i];
    return a;
}}

static inline MPI_Status *plxf_status(MPI_Fint *s)
{{
    if (s == plxf_status_ignore_ || s == &plxf_statuses_ignore_[0][0])
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)s;
}}

static inline MPI_Status *plxf_statuses(MPI_Fint *s)
{{
    if (s == plxf_status_ignore_ || s == &plxf_statuses_ignore_[0][0])
        return MPI_STATUSES_IGNORE;
    return (MPI_Status *)s;
}}

static inline int *plxf_weights(MPI_Fint *w)
{{
    if (w == plxf_unweighted_)
        return MPI_UNWEIGHTED;
    if (w == plxf_weights_empty_)
        return MPI_WEIGHTS_EMPTY;
    return w;
}}

__attribute__((unused)) static inline int *plxf_errcodes(MPI_Fint *e)
{{
    return e == plxf_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : e;
}}

/* A Fortran string as a C string: trailing blanks dropped. */
static char *plxf_str_in(const char *s, size_t len)
{{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {{
        memcpy(c, s, len);
        c[len] = '\0';
    }}
    return c;
}}

/* Room for a C result string: at least the Fortran variable and any
 * MPI_MAX_* limit (the C function writes up to its limit). */
static char *plxf_str_tmp(size_t len)
{{
    char *c = malloc(len + MPI_MAX_LIBRARY_VERSION_STRING + 2);
    if (c)
        c[0] = '\0';
    return c;
}}

/* C string into a Fortran variable: cut to fit, padded with blanks. */
static void plxf_str_out(const char *c, char *f, size_t len)
{{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}}

/* MPI's Fortran arrays of strings (spawn). An element is `len` characters;
 * an argument list ends at its first all-blank element. */
static int plxf_blank(const char *s, size_t len)
{{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    return len == 0;
}}

__attribute__((unused)) static void plxf_argv_free(char **a)
{{
    if (!a)
        return;
    for (char **p = a; *p; p++)
        free(*p);
    free(a);
}}

/* n strings, `stride` elements apart (or, when n < 0, up to the first blank
 * one) as a NULL-terminated C array. Returns 0, or -1 out of memory. */
static int plxf_strs_stride(const char *f, size_t len, size_t stride, long n, char ***out)
{{
    if (n < 0)
        for (n = 0; !plxf_blank(f + (size_t)n * stride * len, len); n++)
            ;
    char **a = calloc((size_t)n + 1, sizeof *a);
    if (!a)
        return -1;
    for (long i = 0; i < n; i++)
        if (!(a[i] = plxf_str_in(f + (size_t)i * stride * len, len))) {{
            plxf_argv_free(a);
            return -1;
        }}
    *out = a;
    return 0;
}}

/* argv(*), ended by a blank element, each `stride` elements apart */
__attribute__((unused)) static int plxf_argv_in(const char *f, size_t len, size_t stride, char ***out)
{{
    return plxf_strs_stride(f, len, stride, -1, out);
}}

/* array_of_commands(n): every element is a string, blank or not */
__attribute__((unused)) static int plxf_strs_in(const char *f, size_t len, int n, char ***out)
{{
    return plxf_strs_stride(f, len, 1, n, out);
}}

__attribute__((unused)) static void plxf_argvs_free(char ***a, int n)
{{
    if (!a)
        return;
    for (int i = 0; i < n; i++)
        plxf_argv_free(a[i]);
    free(a);
}}

/* array_of_argv(n,*): row i (command i's arguments) is elements i, i+n,
 * i+2n, ... of the column-major array, ended by a blank element */
__attribute__((unused)) static int plxf_argvs_in(const char *f, size_t len, int n, char ****out)
{{
    char ***a = calloc((size_t)n, sizeof *a);
    if (!a)
        return -1;
    for (int i = 0; i < n; i++)
        if (plxf_argv_in(f + (size_t)i * len, len, (size_t)n, &a[i])) {{
            plxf_argvs_free(a, n);
            return -1;
        }}
    *out = a;
    return 0;
}}

/* Whether this process is the root of a spawn on comm (1) or not (0). An
 * invalid communicator other than MPI_COMM_NULL gives -1, with *rc_p the
 * error MPI_Comm_rank raised; MPI_COMM_NULL gives 0, so that the spawn call
 * itself reports it. */
__attribute__((unused)) static int plxf_spawn_root(MPI_Fint comm, MPI_Fint root, int *rc_p)
{{
    int r = -1;
    *rc_p = MPI_SUCCESS;
    if ((MPI_Comm)comm == MPI_COMM_NULL)
        return 0;
    if ((*rc_p = PMPI_Comm_rank((MPI_Comm)comm, &r)) != MPI_SUCCESS)
        return -1;
    return r == root;
}}

/* Out of memory for an argument copy: MPI_ERR_NO_MEM without a handler
 * (there is no communicator to raise it on). */
static int plxf_nomem(const char *fn)
{{
    (void)fn;
    return MPI_ERR_NO_MEM;
}}

/* The Fortran type of a C type's size and class (MPI_Type_match_size). */
static MPI_Datatype plxf_fortran_type(MPI_Datatype t)
{{
    static const MPI_Datatype map[][2] = {{
        {{ MPI_FLOAT, MPI_REAL4 }}, {{ MPI_DOUBLE, MPI_REAL8 }}, {{ MPI_LONG_DOUBLE, MPI_REAL16 }},
        {{ MPI_SIGNED_CHAR, MPI_INTEGER1 }}, {{ MPI_SHORT, MPI_INTEGER2 }}, {{ MPI_INT, MPI_INTEGER4 }},
        {{ MPI_LONG_LONG, MPI_INTEGER8 }}, {{ MPI_LONG, MPI_INTEGER8 }},
        {{ MPI_C_FLOAT_COMPLEX, MPI_COMPLEX8 }}, {{ MPI_C_DOUBLE_COMPLEX, MPI_COMPLEX16 }},
        {{ MPI_C_LONG_DOUBLE_COMPLEX, MPI_COMPLEX32 }},
    }};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i][0] == t)
            return map[i][1];
    return t;
}}

/* A predefined attribute's C value points at an int; a value stored from
 * Fortran is the integer itself (builtin keyvals have kind bits 01). */
static inline MPI_Aint plxf_attr_value(MPI_Fint keyval, void *v)
{{
    if (((unsigned)keyval >> 30) == 1)
        return (MPI_Aint) * (int *)v;
    return (MPI_Aint)(intptr_t)v;
}}
'''

KEYVAL_GLUE = r'''
/* Attribute callbacks written in Fortran. The keyval's extra_state (in C)
 * is a plxf_keyval holding the Fortran procedures and the Fortran
 * extra_state; the trampolines call them with Fortran arguments. MPI-2
 * callbacks take INTEGER(MPI_ADDRESS_KIND) values, MPI-1 ones INTEGER.
 * (A plxf_keyval lives as long as the process: attributes may outlive
 * MPI_Comm_free_keyval.) */
typedef void (*plxf_fproc)(void);
typedef void plxf_copy2_fn(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Aint *, MPI_Fint *,
                           MPI_Fint *);
typedef void plxf_delete2_fn(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *);
typedef void plxf_copy1_fn(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                           MPI_Fint *);
typedef void plxf_delete1_fn(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

struct plxf_keyval {
    plxf_fproc copy, del;
    MPI_Aint extra;
    int mpi1;
};

static struct plxf_keyval *plxf_keyval_new(plxf_fproc copy, plxf_fproc del, MPI_Aint extra, int mpi1)
{
    struct plxf_keyval *k = malloc(sizeof *k);
    if (k) {
        k->copy = copy;
        k->del = del;
        k->extra = extra;
        k->mpi1 = mpi1;
    }
    return k;
}

/* the object handle is an int for every keyval kind (MPICH ABI) */
static int plxf_copy_tramp(int obj, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct plxf_keyval *k = extra;
    MPI_Fint o = obj, kv = keyval, fl = PLXF_FALSE, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint ex = (MPI_Fint)k->extra, vin = (MPI_Fint)(intptr_t)in, vout = 0;
        ((plxf_copy1_fn *)(void *)k->copy)(&o, &kv, &ex, &vin, &vout, &fl, &ierr);
        if (fl)
            *(void **)out = (void *)(intptr_t)vout;
    } else {
        MPI_Aint ex = k->extra, vin = (MPI_Aint)(intptr_t)in, vout = 0;
        ((plxf_copy2_fn *)(void *)k->copy)(&o, &kv, &ex, &vin, &vout, &fl, &ierr);
        if (fl)
            *(void **)out = (void *)(intptr_t)vout;
    }
    *flag = fl != 0;
    return ierr;
}

static int plxf_delete_tramp(int obj, int keyval, void *val, void *extra)
{
    struct plxf_keyval *k = extra;
    MPI_Fint o = obj, kv = keyval, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint v = (MPI_Fint)(intptr_t)val, ex = (MPI_Fint)k->extra;
        ((plxf_delete1_fn *)(void *)k->del)(&o, &kv, &v, &ex, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)(intptr_t)val, ex = k->extra;
        ((plxf_delete2_fn *)(void *)k->del)(&o, &kv, &v, &ex, &ierr);
    }
    return ierr;
}
'''


def predefined_callbacks_glue():
    """MPI_COMM_NULL_COPY_FN & co. as Fortran-callable procedures."""
    out = ['', '/* The predefined attribute callbacks, callable from Fortran. */']
    for name, kind, what, _ in F_PREDEFINED_CALLBACKS:
        sym = name.lower() + '_'
        t = 'MPI_Fint' if kind.endswith('1') else 'MPI_Aint'
        if kind.startswith('copy'):
            out += ['PLXF_API void %s(MPI_Fint *obj, MPI_Fint *keyval, %s *extra, %s *in, %s *out,'
                    % (sym, t, t, t),
                    '    MPI_Fint *flag, MPI_Fint *ierr);',
                    'void %s(MPI_Fint *obj, MPI_Fint *keyval, %s *extra, %s *in, %s *out,'
                    % (sym, t, t, t),
                    '    MPI_Fint *flag, MPI_Fint *ierr)', '{',
                    '    (void)obj, (void)keyval, (void)extra;']
            if what == 'dup':
                out += ['    *out = *in;', '    *flag = PLXF_TRUE;']
            else:
                out += ['    (void)in, (void)out;', '    *flag = PLXF_FALSE;']
        else:
            out += ['PLXF_API void %s(MPI_Fint *obj, MPI_Fint *keyval, %s *val, %s *extra, MPI_Fint *ierr);'
                    % (sym, t, t),
                    'void %s(MPI_Fint *obj, MPI_Fint *keyval, %s *val, %s *extra, MPI_Fint *ierr)'
                    % (sym, t, t), '{',
                    '    (void)obj, (void)keyval, (void)val, (void)extra;']
        out += ['    *ierr = MPI_SUCCESS;', '}',
                'PLXF_API extern __typeof__(%s) %s_ __attribute__((alias("%s")));' % (sym, sym, sym)]
    return out


FILE_FROM_LIBRARY = r'''
/* MPI_File is a pointer: the library converts (MPI_File_c2f/f2c). */
static inline MPI_File plxf_file_f2c(MPI_Fint f)
{
    return MPI_File_f2c(f);
}
static inline MPI_Fint plxf_file_c2f(MPI_File f)
{
    return MPI_File_c2f(f);
}
'''

FILE_OWN_TABLE = r'''
/* MPI_File is a pointer and mpi.h has no MPI_File_c2f/f2c: the glue keeps
 * its own table (index + 1; 0 is MPI_FILE_NULL). An unknown integer maps to
 * MPI_FILE_NULL, which the library rejects with MPI_ERR_FILE. */
#include <pthread.h>
static pthread_mutex_t plxf_file_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_File *plxf_files;
static MPI_Fint plxf_nfiles;

static MPI_File plxf_file_f2c(MPI_Fint f)
{
    MPI_File c = MPI_FILE_NULL;
    pthread_mutex_lock(&plxf_file_lock);
    if (f > 0 && f <= plxf_nfiles)
        c = plxf_files[f - 1];
    pthread_mutex_unlock(&plxf_file_lock);
    return c;
}

static MPI_Fint plxf_file_c2f(MPI_File c)
{
    if (c == MPI_FILE_NULL)
        return 0;
    MPI_Fint f = 0, i;
    pthread_mutex_lock(&plxf_file_lock);
    for (i = 0; i < plxf_nfiles && plxf_files[i] != c; i++)
        ;
    if (i < plxf_nfiles) {
        f = i + 1;
    } else {
        for (i = 0; i < plxf_nfiles && plxf_files[i] != MPI_FILE_NULL; i++)
            ;
        if (i == plxf_nfiles) {
            MPI_File *t = realloc(plxf_files, (size_t)(plxf_nfiles + 16) * sizeof(*t));
            if (t) {
                memset(t + plxf_nfiles, 0, 16 * sizeof(*t));
                plxf_files = t;
                plxf_nfiles += 16;
            }
        }
        if (i < plxf_nfiles) {
            plxf_files[i] = c;
            f = i + 1;
        }
    }
    pthread_mutex_unlock(&plxf_file_lock);
    return f;
}
'''


def write_glue(path, funcs, have_file_conv, pmpi):
    sent = []
    for name, block, decl, _ in SENTINELS:
        if name == 'MPI_STATUS_IGNORE':
            sent.append('PLXF_COMMON MPI_Fint %s_[5];' % block)
        elif name == 'MPI_STATUSES_IGNORE':
            sent.append('PLXF_COMMON MPI_Fint %s_[1][5];' % block)
        elif decl.startswith('CHARACTER'):
            sent.append('PLXF_COMMON char %s_[1];' % block)
        elif decl.endswith('(1)'):
            sent.append('PLXF_COMMON MPI_Fint %s_[1];' % block)
        else:
            sent.append('PLXF_COMMON MPI_Fint %s_;' % block)
    out = [GLUE_PRELUDE.format(note=HEADER_NOTE, sentinels='\n'.join(sent)), KEYVAL_GLUE]
    out += predefined_callbacks_glue()
    out.append(SYNC_REG_GLUE)
    if any(f.uses_file for f in funcs):
        out.append(FILE_FROM_LIBRARY if have_file_conv else FILE_OWN_TABLE)
    for f in funcs:
        # pmpi_x_ where mpi.h declares PMPI_X
        for prefix in ('MPI', 'PMPI') if 'P' + f.name in pmpi else ('MPI',):
            lines, sym, aliases = f.glue(prefix)
            out.append('')
            out.append('PLXF_API ' + lines[0])
            out += lines[1:]
            out += ['PLXF_API ' + a for a in aliases]
    open(path, 'w').write('\n'.join(out) + '\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--header', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--no-mpif-interfaces', action='store_true',
                    help='mpif.h without interfaces (compilers without !GCC$ NO_ARG_CHECK)')
    args = ap.parse_args()
    defines, protos, pmpi = parse_header(args.header)
    consts = parse_constants(defines)
    upper = {}
    for n, _, _ in consts:
        if n.upper() in upper:
            raise SystemExit('gen_fortran: %s and %s differ only in case' % (n, upper[n.upper()]))
        upper[n.upper()] = n
    macros = {n for n, _ in defines}
    funcs, skipped = [], []
    for ret, name, params in protos:
        if name in SKIP:
            skipped.append((name, SKIP[name]))
            continue
        if re.search(r'_(c2f|f2c)$', name):
            skipped.append((name, 'handle conversion is C-only'))
            continue
        if name.startswith('MPI_T_'):
            skipped.append((name, 'the tools interface (MPI_T) has C bindings only'))
            continue
        if name.upper() in macros or name.upper() in upper:
            skipped.append((name, 'Fortran name clashes with a constant'))
            continue
        try:
            funcs.append(Func(ret, name, params))
        except Unsupported as e:
            skipped.append((name, str(e)))
    have_file_conv = bool(re.search(r'\bMPI_File_f2c\b', open(args.header).read()))
    os.makedirs(args.out, exist_ok=True)
    write_mpif(os.path.join(args.out, 'mpif.h'), consts, funcs, not args.no_mpif_interfaces)
    write_mpi_module(os.path.join(args.out, 'mpi.f90'), consts, funcs)
    write_f08_module(os.path.join(args.out, 'mpi_f08.f90'),
                     consts, [f for f in funcs if f.name not in NOT_IN_F08])
    write_glue(os.path.join(args.out, 'mpi_fortran.c'), funcs, have_file_conv, pmpi)
    with open(os.path.join(args.out, 'skipped.txt'), 'w') as fp:
        fp.write('# MPI functions of mpi.h without a Fortran binding, and why\n')
        for n, why in skipped:
            fp.write('%s: %s\n' % (n, why))
    print('gen_fortran: %d functions bound, %d skipped (see %s)' %
          (len(funcs), len(skipped), os.path.join(args.out, 'skipped.txt')))


if __name__ == '__main__':
    sys.exit(main())
