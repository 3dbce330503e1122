"""Each module here defines click commands; list them in ALL_COMMANDS."""


def ALL_COMMANDS():
    commands = []
    # Each area appends its commands here, e.g.:
    #   from reader.commands.papers import ingest, papers, rm
    #   commands += [ingest, papers, rm]
    from reader.commands.papers import ingest, papers, rm

    commands += [ingest, papers, rm]
    from reader.commands.serve import serve

    commands += [serve]
    from reader.commands.llm import stats

    commands += [stats]
    from reader.commands.ask import ask_cmd, calibrate_cmd

    commands += [ask_cmd, calibrate_cmd]
    from reader.commands.search import reindex, search

    commands += [search, reindex]
    from reader.commands.review import export, review

    commands += [review, export]
    from reader.commands.read import audit, read, show

    commands += [read, show, audit]
    from reader.commands.judge import judge

    commands += [judge]
    from reader.commands.worker import jobs, worker

    commands += [worker, jobs]
    from reader.commands.table import table

    commands += [table]
    from reader.commands.figures import figures

    commands += [figures]
    from reader.commands.graph import cited_by, cites

    commands += [cites, cited_by]
    from reader.commands.importing import import_cmd

    commands += [import_cmd]
    from reader.commands.zotero import zotero_note

    commands += [zotero_note]
    from reader.commands.user import user

    commands += [user]
    return commands
