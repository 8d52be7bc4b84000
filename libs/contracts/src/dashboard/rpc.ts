// Request/reply payloads of the dashboard service; filled in by the dashboard issue.
export interface DashboardRequests {}
