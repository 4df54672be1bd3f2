"""Sphinx extension: remember two lookups that the pinned Sphinx and pybtex repeat for every reference.

Both only read what they look up, so remembering it changes no output (the HTML of a build with
and without this extension was compared: the same files). Together they took about a quarter of
the book's rendering, which runs after every page has been executed and so adds to every build.

* A ``{numref}`` makes Sphinx 7.4 (``StandardDomain._resolve_numref_xref``) unpickle the whole
  doctree of the page it points to, to read the type and number of one node; the book has 46
  such references, on ten pages. While one is resolved, the doctree of each page is unpickled
  once and kept until the build ends (on the environment); nothing writes to it.
* Every citation makes pybtex look up its style and backend plugins among the installed packages'
  entry points (``pybtex.plugin._load_entry_point``), a scan of every installed distribution's
  metadata. The entry points found for a group and name are kept; plugins registered at run time
  are still looked up first, as pybtex does.
"""

from __future__ import annotations

import functools

_READ = "_rbdyn_numref_doctrees"  # the environment's attribute holding the doctrees read


def _numref_reads_each_doctree_once():
    from sphinx.domains.std import StandardDomain

    resolve = StandardDomain._resolve_numref_xref
    if getattr(resolve, "_rbdyn_cached", False):
        return

    @functools.wraps(resolve)
    def cached(self, env, *args, **kwargs):
        read = env.__dict__.setdefault(_READ, {})  # docname -> unpickled doctree, read only
        get_doctree = env.get_doctree

        def get_doctree_once(docname):
            if docname not in read:
                read[docname] = get_doctree(docname)
            return read[docname]

        env.get_doctree = get_doctree_once
        try:
            return resolve(self, env, *args, **kwargs)
        finally:
            del env.get_doctree  # the environment's own method again

    cached._rbdyn_cached = True
    StandardDomain._resolve_numref_xref = cached


def _forget_doctrees(app, exception):
    # per build: a later build in the same process (sphinx-autobuild) reads the new doctrees
    app.env.__dict__.pop(_READ, None)


def _pybtex_scans_entry_points_once():
    import pybtex.plugin

    if getattr(pybtex.plugin.entry_points, "_rbdyn_cached", False):
        return
    scan = pybtex.plugin.entry_points

    @functools.lru_cache(maxsize=None)
    def found(group, name):
        return tuple(scan(group=group, name=name))

    def entry_points(*, group, name):
        return found(group, name)

    entry_points._rbdyn_cached = True
    pybtex.plugin.entry_points = entry_points


def setup(app):
    _numref_reads_each_doctree_once()
    _pybtex_scans_entry_points_once()
    app.connect("build-finished", _forget_doctrees)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
