"""Projects as their leads set them up: ``folder_check`` (the folder and base ref a project names),
``edits`` (every field checked, a project created or changed whole), ``members`` (who belongs, in
which role; a project keeps a lead) and ``roles`` (what each role may do, and a user's role in a project)."""
